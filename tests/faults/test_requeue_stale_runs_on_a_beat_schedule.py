"""Owed scoring passes are queued again without a person: a Celery beat entry runs `stale_runs_requeue_task`
every REQUEUE_STALE_RUNS_SECONDS, and the task does what `manage.py requeue_stale_runs` does. The schedule and
the task are checked in-process (any database, no broker); the last test runs a real `worker -B` against its
own Redis and the test database (CI's second pass; elsewhere it skips)."""

import json
import os
import subprocess
import sys
from datetime import timedelta

import pytest
from celery.beat import Scheduler
from django.conf import settings

from scoring import services
from scoring.models import ScoringRun, SessionScore
from scoring.tasks import stale_runs_requeue_task
from sessionlab.celery import app
from tests.faults import test_requeue_stale_runs as requeue

from .conftest import ROOT, scored_study_build, wait_for, worker_command, worker_ready

# The broker that goes down and comes back, and a scored run of 16 sessions (test_requeue_stale_runs.py).
broker = requeue.broker
scored = requeue.scored

ENTRY = "requeue-stale-runs"


def _settings_in_a_fresh_process(**env) -> dict:
    """The beat schedule as a new process reads it from the environment (settings are read once)."""
    environment = {
        k: v
        for k, v in os.environ.items()
        if k != "REQUEUE_STALE_RUNS_SECONDS" and not k.startswith("PYTEST")
    }
    environment.update({"DJANGO_SETTINGS_MODULE": "sessionlab.settings", "PYTHONPATH": str(ROOT)}, **env)
    code = (
        "import json, django; from django.conf import settings; django.setup(); "
        "print(json.dumps(settings.CELERY_BEAT_SCHEDULE))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
    )
    return {
        "returncode": result.returncode,
        "stderr": result.stderr,
        "schedule": json.loads(result.stdout.strip().splitlines()[-1]) if result.returncode == 0 else None,
    }


def test_the_beat_schedule_names_a_registered_task_at_the_configured_interval():
    app.loader.import_default_modules()  # what a worker does first: autodiscover every app's tasks.py
    scheduler = Scheduler(app, lazy=True)
    scheduler.merge_inplace(app.conf.beat_schedule)
    entry = scheduler.schedule[ENTRY]
    assert entry.task == "scoring.tasks.stale_runs_requeue_task" == stale_runs_requeue_task.name
    assert entry.task in app.tasks
    assert entry.schedule.run_every == timedelta(seconds=settings.REQUEUE_STALE_RUNS_SECONDS)
    # Its interval, so that a second beat's send within it does nothing (studies/beat.py).
    assert entry.args == () and entry.kwargs == {"once_per_seconds": settings.REQUEUE_STALE_RUNS_SECONDS}
    # A sweep no worker took within one interval is dropped: the next one does the same work.
    assert entry.options["expires"] == settings.REQUEUE_STALE_RUNS_SECONDS


def test_the_interval_is_five_minutes_unless_REQUEUE_STALE_RUNS_SECONDS_says_otherwise():
    assert _settings_in_a_fresh_process()["schedule"][ENTRY]["schedule"] == 300
    assert _settings_in_a_fresh_process(REQUEUE_STALE_RUNS_SECONDS="45")["schedule"][ENTRY]["schedule"] == 45


@pytest.mark.parametrize("value", ["5m", "0", "-1"])
def test_a_malformed_interval_is_refused_by_name(value):
    result = _settings_in_a_fresh_process(REQUEUE_STALE_RUNS_SECONDS=value)
    assert result["returncode"] != 0 and "REQUEUE_STALE_RUNS_SECONDS" in result["stderr"]


@pytest.mark.django_db
def test_the_task_queues_the_owed_run_like_the_command(scored, broker, django_capture_on_commit_callbacks):
    built, run = scored
    first = built.sessions[0]["id"]
    SessionScore.objects.filter(run=run, session_id=first).delete()  # what the lost pass would redo
    broker.down()
    with django_capture_on_commit_callbacks(execute=True):
        services.study_scores_mark_stale(study_id=built.study.pk, session_ids=[first])
    run.refresh_from_db()
    assert run.stale and run.error.startswith(services.NOT_QUEUED)

    broker.up()
    assert stale_runs_requeue_task.delay().get() == [run.pk]
    run.refresh_from_db()
    assert not run.stale and run.error == "" and run.status == ScoringRun.Status.DONE
    assert SessionScore.objects.filter(run=run).count() == 16
    assert stale_runs_requeue_task.delay().get() == []  # idempotent: nothing owed any more


def test_the_task_queues_a_run_stuck_longer_than_REQUEUE_STUCK_MINUTES(scored, broker, settings):
    from django.utils import timezone

    _, run = scored
    ScoringRun.objects.filter(pk=run.pk).update(
        status=ScoringRun.Status.RUNNING, started_at=timezone.now() - timedelta(minutes=10)
    )
    settings.REQUEUE_STUCK_MINUTES = 30
    assert stale_runs_requeue_task.delay().get() == []  # running for 10 minutes: not yet stuck
    settings.REQUEUE_STUCK_MINUTES = 5
    assert stale_runs_requeue_task.delay().get() == [run.pk]
    run.refresh_from_db()
    assert run.status == ScoringRun.Status.DONE


@pytest.mark.needs_worker
@pytest.mark.django_db(transaction=True)
def test_a_beat_in_the_worker_scores_an_owed_run_by_itself(
    designed_study, base_env, processes, tmp_path, queue_to_own_redis
):
    scored_study_build(designed_study, participants=2)
    # Created but never queued, as when the broker was down at creation: owed.
    run = ScoringRun.objects.create(
        study=designed_study,
        reference_version=designed_study.reference_versions.get(),
        weights=[0, 1, 10, 100],
        grid_b=[2.0],
        grid_bq=[4.0],
        is_default=True,
    )
    assert run.status == ScoringRun.Status.PENDING and run.started_at is None

    env = {**base_env, "REQUEUE_STALE_RUNS_SECONDS": "1"}
    worker = processes.start(
        "worker-beat", [*worker_command(), "-B", "-s", str(tmp_path / "beat-schedule")], env
    )
    wait_for(lambda: worker_ready(worker), 60, "the worker (with its beat) to be ready")

    def scored_by_itself():
        run.refresh_from_db()
        return run.status == ScoringRun.Status.DONE

    try:
        wait_for(scored_by_itself, 60, "the beat's sweep to queue the owed run and the worker to score it")
    except pytest.fail.Exception:
        print(worker.log_tail())
        raise
    assert SessionScore.objects.filter(run=run).count() == 8  # 2 participants x 4 scenarios
    assert "scoring.tasks.stale_runs_requeue_task" in worker.log_tail(400)
