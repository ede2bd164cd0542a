"""A scoring run on a real Celery worker (started by .ci/run against PostgreSQL and Redis): the chord of chunk
tasks and its closing task run in the worker, and this process sees the finished run. Skipped on a plain
checkout; in CI a broker without a worker is a failure, not a skip."""

import os
import time

import pytest

from scoring import services
from scoring.models import ScoringRun, SessionScore

pytestmark = [pytest.mark.needs_worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def real_worker():
    broker = os.environ.get("CELERY_BROKER_URL", "")
    running = os.environ.get("SESSIONLAB_WORKER_RUNNING") == "1"
    if broker and running:
        return
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"} and broker:
        pytest.fail("CELERY_BROKER_URL is set but SESSIONLAB_WORKER_RUNNING is not 1: CI must start a worker")
    pytest.skip("needs a real Celery worker: set CELERY_BROKER_URL and SESSIONLAB_WORKER_RUNNING=1 (.ci/run does)")


def _wait(run, seconds=90):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.is_finished:
            return run
        time.sleep(0.25)
    pytest.fail(f"run {run.pk} did not finish in {seconds} s: {run.status} {run.progress_done}/{run.progress_total}")


def test_a_real_worker_scores_a_run_in_chunks_and_rescores_a_stale_session(real_worker, constructed, monkeypatch):
    monkeypatch.setattr(services, "CHUNK_SIZE", 8)  # only this process plans: the worker scores what it is sent
    run = services.scoring_run_create(study=constructed.study)  # autocommit: queued at once
    run = _wait(run)
    assert run.status == ScoringRun.Status.DONE, run.error
    assert run.progress_done == run.progress_total == 32
    assert SessionScore.objects.filter(run=run).count() == 32
    generation, target = run.generation, constructed.sessions[0]["id"]
    services.study_scores_mark_stale(study_id=constructed.study.pk, session_ids=[target])
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.generation > generation and run.is_finished:
            break
        time.sleep(0.25)
    assert run.generation == generation + 1 and not run.stale
    assert SessionScore.objects.get(run=run, session_id=target).pass_number == run.current_pass
