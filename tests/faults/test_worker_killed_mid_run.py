"""A Celery worker killed (SIGKILL, the whole process group) in the middle of a scoring run, holding the lock
of kombu's sweep for unacknowledged messages: a new worker picks up the unacknowledged chunk after the
broker's visibility timeout (acks_late) and the lock's expiry, the queued chunks as they are, and the run
completes with every session scored exactly once (the chunk tasks are upserts keyed by run and session)."""

import signal

import pytest
import redis

from scoring.models import QueryScore, ScoringRun, SessionScore
from sessionlab.settings import broker_transport_options
from studies.models import Query

from .conftest import scored_study_build, wait_for, worker_command, worker_ready

pytestmark = [pytest.mark.needs_worker, pytest.mark.django_db(transaction=True)]

VISIBILITY_TIMEOUT = 4


def test_a_run_completes_once_after_its_worker_is_killed(
    designed_study, base_env, processes, queue_to_own_redis
):
    built = scored_study_build(designed_study, participants=16)
    sessions = [s["id"] for s in built.sessions]
    assert len(sessions) == 64

    env = {**base_env, "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT)}
    first = processes.start("worker-1", worker_command(), env)
    wait_for(lambda: worker_ready(first), 60, "the first worker to be ready")

    # The run is queued (to our Redis) in chunks of one session: 64 tasks, a chord closing the pass.
    run = ScoringRun.objects.create(
        study=designed_study,
        reference_version=designed_study.reference_versions.get(),
        weights=[0, 1, 10, 100],
        grid_b=[2.0],
        grid_bq=[4.0],
        is_default=True,
    )
    queue_to_own_redis.send_task(
        "scoring.tasks.scoring_run_start_task", args=[run.pk, None, 1], ignore_result=True
    )

    def scoring_begun():
        run.refresh_from_db()
        return run.progress_done >= 3

    wait_for(scoring_begun, 60, "the first chunks to be scored", interval=0.02)
    first.stop(signal.SIGKILL)
    run.refresh_from_db()
    killed_at = run.progress_done
    assert killed_at < run.progress_total == 64, "the run finished before the worker was killed: no fault"
    # The worst moment: it died in the middle of a sweep for unacknowledged messages, holding the sweep's lock
    # (kombu's "unacked_mutex") for as long as the workers' settings let a lock live. Until it expires nobody
    # sweeps; kombu's own 300 s would outlast this test's wait.
    mutex_expire = broker_transport_options(VISIBILITY_TIMEOUT)["unacked_mutex_expire"]
    assert (
        redis.Redis.from_url(queue_to_own_redis.conf.broker_url).set(
            "unacked_mutex", "the killed worker", ex=mutex_expire, nx=True
        )
        is not None
    )

    second = processes.start("worker-2", worker_command(), env)
    wait_for(lambda: worker_ready(second), 60, "the second worker to be ready")

    def completed():
        run.refresh_from_db()
        return run.status == ScoringRun.Status.DONE and run.progress_done == run.progress_total

    try:
        wait_for(completed, 90, "the run to complete on the second worker")
    except pytest.fail.Exception:
        print(second.log_tail())
        raise
    scores = list(SessionScore.objects.filter(run=run).values_list("session_id", "pass_number"))
    assert sorted(session for session, _ in scores) == sorted(sessions)  # each once: 64 rows, 64 sessions
    assert {number for _, number in scores} == {run.current_pass}
    assert QueryScore.objects.filter(run=run).count() == Query.objects.filter(session_id__in=sessions).count()
    assert run.error == ""
