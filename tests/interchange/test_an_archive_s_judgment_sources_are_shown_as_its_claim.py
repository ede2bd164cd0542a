"""Who or what made a reference judgment, as an archive says it (a model, a person), is another server's
claim, as a version's provenance is: its source is stored marked "imported (claimed): ", so it shows so
in the API and in the archive exported again (one mark, however often it travels), and a claimed machine
source does not count as this server's machine grades when a later version keeps it."""

import json

import pytest

from studies.assessment.machine import MACHINE_SOURCE_PREFIX
from studies.assessment.references import judgment_copied, reference_version_create
from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive, study_archive_import
from studies.models import ReferenceJudgment

pytestmark = pytest.mark.django_db


@pytest.fixture
def forged_archive(worked_study, alice, tmp_path):
    d1, d2 = (worked_study.collection.documents.get(external_id=e) for e in ("d1", "d2"))
    reference_version_create(
        study=worked_study,
        judgments=[
            ReferenceJudgment(topic_id="1", document=d1, grade=2, source="person: the lab's senior assessor"),
            ReferenceJudgment(topic_id="1", document=d2, grade=1, source="machine fill_unjudged v1"),
        ],
        created_by=alice,
    )
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(study_archive(study=worked_study), default=str))
    return path


def _sources(study) -> dict[str, str]:
    version = study.reference_versions.order_by("-number").first()
    return {j.document.external_id: j.source for j in version.judgments.select_related("document")}


def test_the_sources_are_stored_as_claims(forged_archive, alice):
    copy = study_archive_import(path=forged_archive, owner=alice, name="Copy")
    assert _sources(copy) == {
        "d1": "imported (claimed): person: the lab's senior assessor",
        "d2": "imported (claimed): machine fill_unjudged v1",
    }


def test_the_api_shows_them_as_claims(forged_archive, alice, client):
    copy = study_archive_import(path=forged_archive, owner=alice, name="Copy")
    version = copy.reference_versions.get()
    client.force_login(alice)
    answer = client.get(f"/api/studies/{copy.pk}/reference-versions/{version.pk}/judgments/").json()
    rows = answer["results"] if isinstance(answer, dict) else answer
    assert {row["source"] for row in rows} == {
        "imported (claimed): person: the lab's senior assessor",
        "imported (claimed): machine fill_unjudged v1",
    }


def test_exported_again_the_claim_travels_with_one_mark(forged_archive, alice, tmp_path):
    copy = study_archive_import(path=forged_archive, owner=alice, name="Copy")
    again = study_archive(study=copy)
    assert {j["source"] for j in again["reference_versions"][0]["judgments"]} == {
        "imported (claimed): person: the lab's senior assessor",
        "imported (claimed): machine fill_unjudged v1",
    }
    path = tmp_path / "again.json"
    path.write_text(json.dumps(again, default=str))
    assert _sources(study_archive_import(path=path, owner=alice, name="Copy of copy")) == _sources(copy)


def test_a_later_version_s_copy_keeps_the_mark_and_counts_no_machine_grade(forged_archive, alice):
    copy = study_archive_import(path=forged_archive, owner=alice, name="Copy")
    kept = [judgment_copied(j) for j in copy.reference_versions.get().judgments.all()]
    assert all(row.source.startswith("imported (claimed): ") for row in kept)
    # A merge counts the rows whose source a machine rule wrote as machine grades kept.
    assert not any(row.source.startswith(MACHINE_SOURCE_PREFIX) for row in kept)


def test_a_source_longer_than_its_column_is_refused_by_field(forged_archive, alice):
    data = json.loads(forged_archive.read_text())
    data["reference_versions"][0]["judgments"][1]["source"] = "m" * 201
    forged_archive.write_text(json.dumps(data, indent=1))
    with pytest.raises(ImportFailure) as caught:
        study_archive_import(path=forged_archive, owner=alice, name="Copy")
    assert caught.value.field == "$.reference_versions[0].judgments[1].source"
    assert caught.value.reason == "longer than 200 characters"
