"""Publishing adjudicated grades as reference versions, and the qrels round trip."""

import pytest

from scoring.lib.errors import InputError
from scoring.lib.trec_io import parse_qrels_lines
from studies.assessment import adjudication, references
from studies.errors import AssessmentError
from studies.models import ReferenceJudgment, ReferenceVersion

from .conftest import grade_all


@pytest.fixture
def adjudicated(assessed_study, make_assessors, alice):
    ann, ben = make_assessors(assessed_study, "ann", "ben", per_document=2)
    grade_all(assessed_study, {"d1": [2, 2], "d2": [1, 2]}, [ann, ben])
    grade_all(assessed_study, {"d3": [3, 3], "d4": [0, 3]}, [ann, ben], code="S2")
    adjudication.adjudicate(study=assessed_study, preset="2002", decided_by=alice)
    return assessed_study


def test_publishing_refuses_while_disagreements_wait_for_the_researcher(adjudicated, alice):
    with pytest.raises(AssessmentError, match="1 judged documents have no decision"):
        references.reference_version_publish(study=adjudicated, created_by=alice)
    assert not ReferenceVersion.objects.exists()


def test_publishing_creates_the_next_version_from_the_adjudicated_grades(adjudicated, alice):
    d4 = adjudicated.scenarios.get(code="S2").assessment_pool.documents.get(document__external_id="d4")
    adjudication.adjudication_decide(pool_document=d4, grade=1, decided_by=alice)
    first = references.reference_version_publish(study=adjudicated, created_by=alice)
    second = references.reference_version_publish(study=adjudicated, created_by=alice, note="again")
    assert (first.number, second.number, second.note) == (1, 2, "again")
    rows = {
        (j.topic_id, j.document.external_id): (j.grade, j.judged_by.username, j.source)
        for j in ReferenceJudgment.objects.filter(version=first).select_related("document", "judged_by")
    }
    assert rows == {
        ("1", "d1"): (2, "ann", "adjudication v1 (agreed)"),
        ("1", "d2"): (1, "ann", "adjudication v1 (in_turn)"),
        ("2", "d3"): (3, "ann", "adjudication v1 (agreed)"),
        ("2", "d4"): (1, "alice", "adjudication v1 (researcher)"),
    }


def test_publishing_with_pending_disagreements_leaves_them_out_when_asked(adjudicated, alice):
    version = references.reference_version_publish(study=adjudicated, created_by=alice, allow_pending=True)
    assert version.judgments.count() == 3


def test_qrels_export_then_import_gives_the_same_judgments(adjudicated, alice):
    version = references.reference_version_publish(study=adjudicated, created_by=alice, allow_pending=True)
    text = references.reference_version_qrels(version=version)
    assert text == "1 0 d1 2\n1 0 d2 1\n2 0 d3 3\n"
    imported = references.reference_version_import_qrels(
        study=adjudicated, lines=text.splitlines(), path="v1.qrels", created_by=alice
    )
    assert imported.number == 2
    assert references.reference_version_qrels(version=imported) == text
    assert parse_qrels_lines(text.splitlines()) == {"1": {"d1": 2, "d2": 1}, "2": {"d3": 3}}
    assert set(imported.judgments.values_list("source", flat=True)) == {"qrels v1.qrels"}


@pytest.mark.parametrize(
    ("lines", "line", "reason"),
    [
        (["1 0 d1 2", "1 0 d2 7"], 2, "grade 7 is not in the study's scale"),
        (["5 0 d1 2", "6 0 d2 1"], None, "none of its topics is a scenario topic"),
        (["1 0 d1 2", "1 0 d1 3"], 2, "judged twice"),
        (["1 0 zz 2"], 1, "document 'zz' is not in the study's collection"),
    ],
)
def test_a_bad_qrels_file_creates_no_version(assessed_study, alice, lines, line, reason):
    with pytest.raises(InputError) as caught:
        references.reference_version_import_qrels(
            study=assessed_study, lines=lines, path="ref.qrels", created_by=alice
        )
    assert (caught.value.path, caught.value.line) == ("ref.qrels", line)
    assert reason in caught.value.reason
    assert not ReferenceVersion.objects.exists()


def test_the_admin_neither_adds_nor_edits_reference_versions(client, django_user_model, adjudicated, alice):
    """The admin bypassed the one writer (no re-score) and edited versions that runs record as used."""
    version = references.reference_version_publish(study=adjudicated, created_by=alice, allow_pending=True)
    judgment = version.judgments.first()
    grade = judgment.grade
    root = django_user_model.objects.create_superuser("root", password="root-password")
    client.force_login(root)
    for model, pk in (("referenceversion", version.pk), ("referencejudgment", judgment.pk)):
        assert client.get(f"/admin/studies/{model}/add/").status_code == 403
        assert (
            client.post(f"/admin/studies/{model}/{pk}/change/", {"note": "x", "grade": 9}).status_code == 403
        )
        assert client.get(f"/admin/studies/{model}/{pk}/change/").status_code == 200  # still readable
    judgment.refresh_from_db()
    version.refresh_from_db()
    assert (judgment.grade, version.note) == (grade, "adjudication of 3 documents")
