"""A new reference version leaves the default run exactly as a fresh run with the same parameters would
score the study, score by score, whichever way the version is made: re-scoring must not start before the
version's judgments are written (it once ran between the two, so scenarios the new version judged for the
first time kept their old scores under "reference v2, Done")."""

import pytest

from scoring import services
from scoring.models import QueryScore, ScoringRun, SessionScore
from studies.assessment import references
from studies.models import ReferenceJudgment

pytestmark = pytest.mark.django_db

SUMMARY_FIELDS = ["final", "ideal_final", "normalized_final", "last_query", "best_query", "average"]


@pytest.fixture
def half_judged(constructed, django_capture_on_commit_callbacks):
    """The constructed study whose v1 judges only topics 1 and 2, scored by its default run."""
    ReferenceJudgment.objects.filter(version__study=constructed.study, topic_id__in=["3", "4"]).delete()
    with django_capture_on_commit_callbacks(execute=True):
        run = services.scoring_run_create(study=constructed.study, b=2.0, bq=4.0, top=10)
    run.refresh_from_db()
    assert run.status == "done"
    return constructed, run


def new_grades(built):
    """v2: topic 1 changed (every grade moved by one), topic 2 as in v1, topics 3 and 4 judged for the first
    time."""
    grades = {topic: dict(g) for topic, g in built.grades.items()}
    grades["1"] = {doc: (grade + 1) % 4 for doc, grade in grades["1"].items()}
    return grades


def qrels_lines(grades):
    return [f"{topic} 0 {doc} {grade}" for topic, by_doc in grades.items() for doc, grade in by_doc.items()]


def scores(run):
    sessions = {
        row["session_id"]: row
        for row in SessionScore.objects.filter(run=run).values(
            "session_id", *SUMMARY_FIELDS, "curve", "ideal"
        )
    }
    for row in sessions.values():
        row["curve"], row["ideal"] = bytes(row["curve"]), bytes(row["ideal"])
    queries = {
        row[0]: row[1:]
        for row in QueryScore.objects.filter(run=run).values_list("query_id", "sdcg", "by_rank", "is_last")
    }
    return sessions, {key: (sdcg, bytes(by_rank), last) for key, (sdcg, by_rank, last) in queries.items()}


def assert_same_as_a_fresh_run(study, run, django_capture_on_commit_callbacks):
    run.refresh_from_db()
    latest = study.reference_versions.order_by("-number").first()
    assert (run.reference_version_id, run.status, run.stale) == (latest.pk, ScoringRun.Status.DONE, False)
    with django_capture_on_commit_callbacks(execute=True):
        fresh = services.scoring_run_create(study=study, b=2.0, bq=4.0, top=10, make_default=False)
    fresh.refresh_from_db()
    assert fresh.reference_version_id == latest.pk and fresh.status == ScoringRun.Status.DONE
    rescored, rescored_queries = scores(run)
    expected, expected_queries = scores(fresh)
    assert len(expected) == 32
    differing = [pk for pk in expected if rescored.get(pk) != expected[pk]]
    assert differing == [], f"{len(differing)} of 32 sessions differ from a fresh run"
    assert rescored_queries == expected_queries


def test_an_imported_version_rescores_every_scenario_it_changes(
    half_judged, alice, django_capture_on_commit_callbacks
):
    built, run = half_judged
    before, _queries = scores(run)
    on_topic_3 = [s["id"] for s in built.sessions if s["topic"] == "3"]
    assert all(before[pk]["final"] == 0 for pk in on_topic_3)
    with django_capture_on_commit_callbacks(execute=True):
        references.reference_version_import_qrels(
            study=built.study, lines=qrels_lines(new_grades(built)), path="v2.qrels", created_by=alice
        )
    assert_same_as_a_fresh_run(built.study, run, django_capture_on_commit_callbacks)
    after, _queries = scores(run)
    assert any(after[pk]["final"] > 0 for pk in on_topic_3)


def test_a_version_is_announced_only_once_its_judgments_are_committed(
    half_judged, alice, django_capture_on_commit_callbacks
):
    built, run = half_judged
    with django_capture_on_commit_callbacks(execute=True):
        references.reference_version_import_qrels(
            study=built.study, lines=qrels_lines(new_grades(built)), path="v2.qrels", created_by=alice
        )
        run.refresh_from_db()
        assert run.reference_version.number == 1 and not run.stale  # nothing announced before the commit
    assert_same_as_a_fresh_run(built.study, run, django_capture_on_commit_callbacks)
