"""A new reference version makes the default run not current from the moment it is committed, before the hook
that re-scores has run, and while the re-score of the changed topics' sessions is owed; then current again.
A version that changes no topic leaves the run current at once, with nothing re-scored."""

import pytest

from scoring.freshness import run_freshness
from scoring.models import SessionScore
from studies.assessment.references import reference_version_create
from studies.models import ReferenceJudgment

pytestmark = pytest.mark.django_db


def _publish(built, docs, grades):
    """The one writer of versions: it announces the version on commit (the hook); the caller captures it."""
    rows = [
        ReferenceJudgment(topic_id=topic, document=docs[ext], grade=grade)
        for topic, judged in grades.items()
        for ext, grade in judged.items()
    ]
    return reference_version_create(study=built.study, judgments=rows, note="test")


def test_a_version_committed_then_announced_then_scored(
    scored, collection_docs, django_capture_on_commit_callbacks
):
    built, run = scored
    grades = {topic: dict(judged) for topic, judged in built.grades.items()}
    grades["1"] = {ext: 3 for ext in grades["1"]}  # topic 1 changes, the others do not
    topic_one = SessionScore.objects.filter(run=run, scenario__topic_id="1").count()
    with django_capture_on_commit_callbacks(execute=False) as announced:
        _publish(built, collection_docs, grades)
    # Committed, the hook not yet run: the run still points at v1.
    assert run_freshness(run).reasons == ("scored on reference v1, v2 is the latest",)
    assert len(announced) == 1
    with django_capture_on_commit_callbacks(execute=False) as rescore:
        announced[0]()  # the hook: points the run at v2, carries the unchanged topics over, queues the rest
    run.refresh_from_db()
    assert run.reference_version.number == 2 and run.status == "done"
    assert run_freshness(run).reasons == (
        f"{topic_one} sessions still scored on reference v1, v2 is the latest",
    )
    for callback in rescore:
        callback()
    run.refresh_from_db()
    assert run_freshness(run).current
    assert set(SessionScore.objects.filter(run=run).values_list("reference_version__number", flat=True)) == {
        2
    }


def test_a_version_that_changes_nothing_leaves_the_run_current_at_once(
    scored, collection_docs, django_capture_on_commit_callbacks
):
    built, run = scored
    with django_capture_on_commit_callbacks(execute=False) as announced:
        _publish(built, collection_docs, built.grades)
    assert not run_freshness(run).current
    with django_capture_on_commit_callbacks(execute=False) as rescore:
        announced[0]()
    run.refresh_from_db()
    assert run.reference_version.number == 2 and rescore == [] and run_freshness(run).current
