"""A reference version's provenance (the machine rules that let a machine assessor's grades in)
goes into the archive and comes back from it as written, marked as the archive's claim; an older
archive, which has none, reads none."""

import json

import pytest

from studies.assessment.references import reference_version_create
from studies.interchange.archive import study_archive, study_archive_import
from studies.interchange.archive.reader import ImportFailure
from studies.models import ReferenceJudgment, Study

pytestmark = pytest.mark.django_db

PROVENANCE = {
    "machine_rules": ["fill_unjudged"],
    "machine_assessor": {"assessor": "llm-judge", "assessor_id": 7, "kind": "llm", "model": "qwen2.5:7b"},
    "documents_filled": 1,
    "ties_broken": 0,
}


@pytest.fixture
def archived(worked_study, alice, tmp_path):
    document = worked_study.collection.documents.get(external_id="d1")
    reference_version_create(
        study=worked_study,
        judgments=[ReferenceJudgment(topic_id="1", document=document, grade=2, source="qrels a")],
        created_by=alice,
    )
    reference_version_create(
        study=worked_study,
        judgments=[ReferenceJudgment(topic_id="1", document=document, grade=3, source="machine fill v2")],
        created_by=alice,
        provenance=PROVENANCE,
    )
    return study_archive(study=worked_study)


def imported(archive, tmp_path, alice):
    path = tmp_path / "study.json"
    path.write_text(json.dumps(archive, default=str))
    return study_archive_import(path=path, owner=alice)


def test_the_provenance_is_exported_and_imported_as_written(archived, tmp_path, alice):
    assert [v["provenance"] for v in archived["reference_versions"]] == [None, PROVENANCE]
    copy = imported(archived, tmp_path, alice)
    claimed = PROVENANCE | {"imported": True}
    assert [v.provenance or None for v in copy.reference_versions.order_by("number")] == [None, claimed]
    assert [v["provenance"] for v in study_archive(study=copy)["reference_versions"]] == [None, claimed]


def test_an_older_archive_without_provenance_reads_none(archived, tmp_path, alice):
    for version in archived["reference_versions"]:
        del version["provenance"]
    copy = imported(archived, tmp_path, alice)
    assert [v.facts for v in copy.reference_versions.order_by("number")] == [{}, {}]


def test_a_provenance_that_is_no_object_is_refused_and_nothing_imported(archived, tmp_path, alice):
    archived["reference_versions"][1]["provenance"] = "filled by a model"
    before = Study.objects.count()
    with pytest.raises(ImportFailure, match="provenance"):
        imported(archived, tmp_path, alice)
    assert Study.objects.count() == before
