"""The web server restarted under load: six participants keep logging (queries, which write a Query and its
results, and page events) through gunicorn from outboxes that re-send until acknowledged, while the test kills
gunicorn (SIGKILL: requests cut mid-way, answers lost after commit) and starts it again, then restarts it
gracefully (SIGTERM). At the end every event was acknowledged and each client event id is stored exactly once,
with one Query per acknowledged query event."""

import signal
import threading
import time

import pytest

from studies.models import Event, Query

from .conftest import OutboxClient, free_port, gunicorn_command, gunicorn_up, stored_counts, wait_for

pytestmark = [pytest.mark.needs_worker, pytest.mark.django_db(transaction=True)]


def test_outboxes_resend_through_restarts_and_nothing_is_stored_twice(live_study, base_env, processes):
    port = free_port()
    web = processes.start("gunicorn-1", gunicorn_command(port), base_env)
    wait_for(lambda: gunicorn_up(port), 60, "gunicorn to answer")
    clients = [OutboxClient(port, player, timeout=3) for player in live_study.players]
    stop = threading.Event()

    def participant(client: OutboxClient):
        words = ["wing", "flow", "heat", "shock", "panel", "drag"]
        for n in range(400):  # bounded: at most 400 rounds
            if stop.is_set():
                break
            client.enqueue("query", {"text": words[n % len(words)]})
            client.enqueue("tab_hidden", {"n": n})
            client.enqueue("tab_visible", {"n": n})
            if not client.flush():
                time.sleep(0.1)
        client.drain(30)

    threads = [threading.Thread(target=participant, args=(client,), daemon=True) for client in clients]
    for thread in threads:
        thread.start()
    time.sleep(2)
    web.stop(signal.SIGKILL)  # mid-request: some answers are lost after their transaction committed
    time.sleep(1)  # refused connections meanwhile
    web = processes.start("gunicorn-2", gunicorn_command(port), base_env)
    wait_for(lambda: gunicorn_up(port), 60, "gunicorn to answer again")
    time.sleep(2)
    web.stop(signal.SIGTERM)  # graceful: in-flight requests finish
    web = processes.start("gunicorn-3", gunicorn_command(port), base_env)
    wait_for(lambda: gunicorn_up(port), 60, "gunicorn to answer a third time")
    time.sleep(2)
    stop.set()
    for thread in threads:
        thread.join(timeout=45)
    assert not any(thread.is_alive() for thread in threads)

    failures = [s for client in clients for _, s in client.statuses if s != 200]
    assert failures, "no request failed: the restarts did not happen under load"
    assert all(not client.outbox for client in clients), "events left unacknowledged"
    counts = stored_counts(clients)
    assert len(counts) == sum(len(client.sent) for client in clients)
    assert set(counts.values()) == {1}, {cid: n for cid, n in counts.items() if n != 1}
    assert all(client.acks[cid].get("ok") for client in clients for cid in client.sent)
    query_events = Event.objects.filter(
        participant__study=live_study, type="query", client_event_id__startswith="F"
    )
    assert (
        Query.objects.filter(session__assignment__participant__study=live_study).count()
        == query_events.count()
    )
    assert {e.payload["ack"]["query_id"] for e in query_events} == set(
        Query.objects.filter(session__assignment__participant__study=live_study).values_list("pk", flat=True)
    )
