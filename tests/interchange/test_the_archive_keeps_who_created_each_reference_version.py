"""Every reference version keeps its creator through the archive, and every reference judgment its
judge: linked only when the name is the importing researcher's own account; otherwise kept by
name (never mapped to the importing researcher, nor to another account of that name), shown and exported
again as it came, and the import says so (a creator) by file and line."""

import json

import pytest
from django.contrib.auth import get_user_model

from studies.assessment.references import reference_version_create, reference_version_import_qrels
from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive, study_archive_import
from studies.models import ReferenceJudgment, ReferenceVersion, Study

pytestmark = pytest.mark.django_db


@pytest.fixture
def versions_by_two(worked_study, alice):
    rita = get_user_model().objects.create_user("rita", password="rita-password", is_staff=True)
    worked_study.researchers.add(rita)
    reference_version_import_qrels(study=worked_study, lines=["1 0 d1 2"], path="a.qrels", created_by=alice)
    reference_version_import_qrels(study=worked_study, lines=["1 0 d1 3"], path="b.qrels", created_by=rita)
    d2 = worked_study.collection.documents.get(external_id="d2")
    reference_version_create(
        study=worked_study,
        judgments=[
            ReferenceJudgment(topic_id="1", document=d2, grade=1, judged_by=rita, source="adjudicated")
        ],
        created_by=alice,
    )
    return worked_study


def _written(study, tmp_path):
    path = tmp_path / "study.json"
    path.write_text(json.dumps(study_archive(study=study), indent=1))
    return path


def test_an_existing_creator_is_linked_and_a_missing_one_kept_by_name(versions_by_two, alice, tmp_path):
    path = _written(versions_by_two, tmp_path)
    get_user_model().objects.filter(username="rita").delete()  # rita has no account where it is imported
    copy = study_archive_import(path=path, owner=alice, name="Copy")
    first, second, third = ReferenceVersion.objects.filter(study=copy).order_by("number")
    assert (first.created_by, first.creator_name) == (alice, "alice")
    assert (second.created_by, second.creator_name) == (None, "rita")  # not the importing researcher
    judged = third.judgments.get()
    assert (judged.judged_by, judged.judge_name) == (None, "rita")
    assert any(
        "'rita' is not the importing account" in note and "study.json:" in note for note in copy.import_notes
    )
    again = study_archive(study=Study.objects.get(pk=copy.pk))
    assert [v["created_by"] for v in again["reference_versions"]] == ["alice", "rita", "alice"]
    assert again["reference_versions"][2]["judgments"][0]["judged_by"] == "rita"


def test_the_name_outlives_a_deleted_account_and_shows_on_the_assessment_page(versions_by_two, alice, client):
    get_user_model().objects.filter(username="rita").delete()
    archive = study_archive(study=versions_by_two)
    assert [v["created_by"] for v in archive["reference_versions"]] == ["alice", "rita", "alice"]
    assert archive["reference_versions"][2]["judgments"][0]["judged_by"] == "rita"
    client.force_login(alice)
    page = client.get(f"/assess/manage/{versions_by_two.slug}/").content.decode()
    assert "<td>rita</td>" in page


def test_a_creator_that_is_no_name_is_refused_by_line_and_field(versions_by_two, alice, tmp_path):
    archive = study_archive(study=versions_by_two)
    archive["reference_versions"][1]["created_by"] = 7
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(archive, indent=1))
    studies = Study.objects.count()
    with pytest.raises(ImportFailure) as caught:
        study_archive_import(path=path, owner=alice, name="Bad")
    assert caught.value.field == "$.reference_versions[1].created_by" and caught.value.line is not None
    assert Study.objects.count() == studies
