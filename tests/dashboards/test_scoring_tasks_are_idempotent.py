"""A re-delivered chunk task (acks_late) leaves one result set; a large study is split into chunks."""

import pytest

from scoring import services
from scoring.models import QueryScore, ScoringRun, SessionScore
from scoring.tasks import scoring_chunk_task, scoring_run_start_task

pytestmark = pytest.mark.django_db


def _snapshot(run):
    return sorted(
        SessionScore.objects.filter(run=run).values_list(
            "session_id", "final", "normalized_final", "average", "curve", "pass_number"
        )
    )


def test_running_the_same_chunk_twice_leaves_one_result_set(scored):
    built, run = scored
    ids = [s["id"] for s in built.sessions]
    before = _snapshot(run)
    queries_before = QueryScore.objects.filter(run=run).count()
    for _ in range(2):
        assert scoring_chunk_task.apply(args=(run.pk, run.current_pass, ids)).get() == 32
    assert _snapshot(run) == before
    assert SessionScore.objects.filter(run=run).count() == 32
    assert QueryScore.objects.filter(run=run).count() == queries_before
    run.refresh_from_db()
    assert run.progress_done == 32


def test_a_study_is_scored_in_chunks_and_progress_counts_rows_not_deliveries(
    constructed, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(services, "CHUNK_SIZE", 5)
    plan = []
    real_start = services.scoring_pass_start

    def spy(**kwargs):
        result = real_start(**kwargs)
        plan.append(result)
        return result

    monkeypatch.setattr(services, "scoring_pass_start", spy)
    with django_capture_on_commit_callbacks(execute=True):
        run = services.scoring_run_create(study=constructed.study)
    run.refresh_from_db()
    pass_number, chunks = plan[0]
    assert [len(c) for c in chunks] == [5] * 6 + [2]
    assert run.status == ScoringRun.Status.DONE and run.progress_done == run.progress_total == 32
    # Deliver one chunk again: the progress stays a count of rows.
    scoring_chunk_task.apply(args=(run.pk, pass_number, chunks[0]))
    run.refresh_from_db()
    assert run.progress_done == 32 and SessionScore.objects.filter(run=run).count() == 32


def test_a_second_full_pass_rewrites_the_rows_and_bumps_the_chart_generation(scored):
    built, run = scored
    before = sorted(SessionScore.objects.filter(run=run).values_list("session_id", "final"))
    generation = run.generation
    scoring_run_start_task.apply(args=(run.pk, None))
    run.refresh_from_db()
    assert sorted(SessionScore.objects.filter(run=run).values_list("session_id", "final")) == before
    assert set(SessionScore.objects.filter(run=run).values_list("pass_number", flat=True)) == {
        run.current_pass
    }
    assert run.generation == generation + 1


def test_a_grade_without_a_weight_fails_the_run_with_a_message(
    constructed, django_capture_on_commit_callbacks
):
    from studies.models import GradeLevel, ReferenceJudgment

    GradeLevel.objects.create(study=constructed.study, value=4, label="vital")
    ReferenceJudgment.objects.filter(version__study=constructed.study).update(grade=4)
    with django_capture_on_commit_callbacks(execute=True):
        run = services.scoring_run_create(study=constructed.study, weights=(0, 1, 10, 100, 1000))
    ScoringRun.objects.filter(pk=run.pk).update(weights=[0, 1, 10, 100])  # as if edited in the admin
    scoring_run_start_task.apply(args=(run.pk, None))
    run.refresh_from_db()
    assert run.status == ScoringRun.Status.FAILED
    assert "grade 4 is outside the weights" in run.error
