"""Redis stopped while participants are logging (gunicorn and a Celery worker on the test database, our own
redis-server): the participants' requests go on answering at once and every event is stored (in PostgreSQL);
finishing a search while the broker is down leaves the study's default run stale and owing a pass; when Redis
is back, `manage.py requeue_stale_runs` queues it, the worker (reconnected) scores every finished session, and
no event is lost or stored twice."""

import subprocess
import time

import pytest

from scoring import services
from scoring.models import ScoringRun, SessionScore
from studies.models import SearchSession

from .conftest import (
    BIN,
    OutboxClient,
    free_port,
    gunicorn_command,
    gunicorn_up,
    stored_counts,
    wait_for,
    worker_command,
    worker_ready,
)

pytestmark = [pytest.mark.needs_worker, pytest.mark.django_db(transaction=True)]


def search_and_finish(client: OutboxClient) -> float:
    """Query, open the first result, judge it, end the session: each POST answered; returns the slowest."""
    slowest = 0.0
    query = client.enqueue("query", {"text": "wing"})
    for step in range(4):
        started = time.monotonic()
        assert client.flush(), f"step {step}: {client.statuses[-1]}"
        slowest = max(slowest, time.monotonic() - started)
        if step == 0:
            doc = client.acks[query]["results"][0]["doc"]
            client.enqueue("document_open", {"doc": doc, "rank": 1, "query_event": query})
        elif step == 1:
            client.enqueue("document_close", {"doc": doc, "rank": 1, "query_event": query, "dwell_ms": 900})
            client.enqueue("judgment", {"doc": doc, "grade": 2})
        elif step == 2:
            client.enqueue("session_end", {"reason": "satisfied"})
    return slowest


def test_logging_goes_on_without_redis_and_scoring_is_queued_again(
    live_study, base_env, processes, own_redis, queue_to_own_redis
):
    worker = processes.start("worker", worker_command(), {**base_env, "CELERY_VISIBILITY_TIMEOUT": "30"})
    port = free_port()
    web = processes.start("gunicorn", gunicorn_command(port), base_env)
    wait_for(lambda: worker_ready(worker), 60, "the worker to be ready")
    wait_for(lambda: gunicorn_up(port), 60, "gunicorn to answer")

    run = services.scoring_run_create(study=live_study, judgments=ScoringRun.Judgments.PARTICIPANT)
    wait_for(lambda: ScoringRun.objects.get(pk=run.pk).status == ScoringRun.Status.DONE, 60, "the first pass")
    clients = [OutboxClient(port, player) for player in live_study.players]

    # Redis up: two participants search and finish; their sessions are scored by the worker.
    for client in clients[:2]:
        search_and_finish(client)
    wait_for(lambda: SessionScore.objects.filter(run=run).count() == 2, 60, "the first two sessions scored")

    # Redis down: three more search and finish. Every request is answered at once, every event stored.
    own_redis.stop()
    slowest = max(search_and_finish(client) for client in clients[2:5])
    assert slowest < 5, f"a request waited {slowest:.1f} s for the broker"
    run.refresh_from_db()
    assert run.stale and run.error.startswith(services.NOT_QUEUED)
    assert "could not queue scoring.tasks.scoring_run_start_task" in web.log_tail(200)

    # Redis back (empty, as after a restart without persistence): the last participant's pass is queued from
    # the request as usual, and requeue_stale_runs queues the full pass the outage left owing.
    own_redis.start()
    search_and_finish(clients[5])
    out = subprocess.run(
        [str(BIN / "python"), "manage.py", "requeue_stale_runs"],
        env=base_env,
        timeout=60,
        capture_output=True,
        text=True,
        cwd=base_env["PYTHONPATH"],
    )
    assert out.returncode == 0 and f"queued 1 run(s): {run.pk}" in out.stdout, out.stdout + out.stderr

    ended = set(
        SearchSession.objects.filter(
            assignment__participant__study=live_study, ended_at__isnull=False
        ).values_list("pk", flat=True)
    )
    assert len(ended) == 6

    def scored():
        fresh = ScoringRun.objects.get(pk=run.pk)
        done = set(SessionScore.objects.filter(run=run).values_list("session_id", flat=True))
        return (
            fresh.status == ScoringRun.Status.DONE and not fresh.stale and fresh.error == "" and done == ended
        )

    try:
        wait_for(scored, 90, "every finished session scored once the broker is back", interval=0.5)
    except pytest.fail.Exception:
        print(worker.log_tail(80))
        raise
    counts = stored_counts(clients)
    assert set(counts.values()) == {1}, {cid: n for cid, n in counts.items() if n != 1}
    assert all(client.acks[cid].get("ok") for client in clients for cid in client.sent)
