"""A scoring run on a real Celery worker (started by .ci/run against PostgreSQL and Redis): the chord of chunk
tasks and its closing task run in the worker, and this process sees the finished run. Skipped on a plain
checkout; in CI a broker without a worker is a failure, not a skip."""

import time

import pytest

from scoring import services
from scoring.models import ScoringRun, SessionScore
from scoring.tasks import scoring_run_start_task

pytestmark = [pytest.mark.needs_worker, pytest.mark.django_db(transaction=True)]


def _wait(run, seconds=90):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.is_finished:
            return run
        time.sleep(0.25)
    pytest.fail(
        f"run {run.pk} did not finish in {seconds} s: {run.status} {run.progress_done}/{run.progress_total}"
    )


def _wait_for_generation(run, generation, seconds=90):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.generation > generation and run.is_finished:
            return run
        time.sleep(0.25)
    pytest.fail(f"run {run.pk} did not finish a pass in {seconds} s: {run.status}")


def test_a_real_worker_scores_a_run_in_chunks_and_rescores_a_stale_session(real_worker, constructed):
    run = services.scoring_run_create(study=constructed.study)  # autocommit: queued at once
    run = _wait(run)
    assert run.status == ScoringRun.Status.DONE, run.error
    assert run.progress_done == run.progress_total == 32
    assert SessionScore.objects.filter(run=run).count() == 32
    finals = dict(SessionScore.objects.filter(run=run).values_list("session_id", "final"))

    # A full pass in four chunks: a group on the worker's two processes, closed by the chord's body.
    generation = run.generation
    assert scoring_run_start_task.delay(run.pk, None, 8).get(timeout=60) == 4
    run = _wait_for_generation(run, generation)
    assert run.status == ScoringRun.Status.DONE and run.progress_done == 32
    assert dict(SessionScore.objects.filter(run=run).values_list("session_id", "final")) == finals
    assert set(SessionScore.objects.filter(run=run).values_list("pass_number", flat=True)) == {
        run.current_pass
    }

    generation, target = run.generation, constructed.sessions[0]["id"]
    services.study_scores_mark_stale(study_id=constructed.study.pk, session_ids=[target])
    run = _wait_for_generation(run, generation)
    assert not run.stale and run.progress_total == 1
    assert SessionScore.objects.get(run=run, session_id=target).pass_number == run.current_pass
