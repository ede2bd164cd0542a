"""The database briefly unreachable: gunicorn reaches PostgreSQL through a TCP proxy (a thread of this test,
on 127.0.0.1), which the test cuts while participants are logging queries (each one a Query, its ShownResults
and its Event in one transaction) and then restores. While it is cut, requests fail cleanly (a 5xx answer, the
events left in the outbox); afterwards they succeed again, and no query is half-written: every stored Query
has its results and its Event, and every event is stored exactly once."""

import selectors
import socket
import threading
import time
from collections import Counter
from urllib.parse import urlsplit, urlunsplit

import pytest

from studies.models import Event, Query, ShownResult

from .conftest import OutboxClient, free_port, gunicorn_command, gunicorn_up, stored_counts, wait_for

pytestmark = [pytest.mark.needs_worker, pytest.mark.django_db(transaction=True)]


class CuttableProxy:
    """127.0.0.1:port -> target. cut(): every open connection is closed and new ones are closed on accept;
    restore(): connections pass again. One thread, a selector; bounded by stop()."""

    def __init__(self, target: tuple[str, int]):
        self.target, self.port = target, free_port()
        self.listener = socket.create_server(("127.0.0.1", self.port))
        self.listener.setblocking(False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, None)
        self.peers: dict[socket.socket, socket.socket] = {}
        self.is_cut = threading.Event()
        self.cut_requested = threading.Event()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _close(self, sock):
        other = self.peers.pop(sock, None)
        for s in (sock, other):
            if s is None:
                continue
            self.peers.pop(s, None)
            try:
                self.selector.unregister(s)
            except (KeyError, ValueError):
                pass
            s.close()

    def _loop(self):
        while not self.stopping.is_set():
            if self.cut_requested.is_set():
                for sock in list(self.peers):
                    self._close(sock)
                self.cut_requested.clear()
                self.is_cut.set()
            for key, _ in self.selector.select(timeout=0.05):
                if key.fileobj is self.listener:
                    self._accept()
                else:
                    self._relay(key.fileobj)
        for sock in list(self.peers):
            self._close(sock)
        self.selector.close()
        self.listener.close()

    def _accept(self):
        """A new client, joined to a fresh connection upstream (refused while cut)."""
        try:
            client, _ = self.listener.accept()
        except BlockingIOError:
            return
        if self.is_cut.is_set():
            client.close()
            return
        try:
            upstream = socket.create_connection(self.target, timeout=2)
        except OSError:
            client.close()
            return
        for s in (client, upstream):
            s.setblocking(False)
            self.selector.register(s, selectors.EVENT_READ, None)
        self.peers[client], self.peers[upstream] = upstream, client

    def _relay(self, sock):
        """What `sock` has to say, passed to its peer; both closed when it has hung up."""
        try:
            data = sock.recv(65536)
            if data:
                self.peers[sock].setblocking(True)
                self.peers[sock].sendall(data)
                self.peers[sock].setblocking(False)
                return
        except (OSError, KeyError):
            pass
        self._close(sock)

    def cut(self):
        self.cut_requested.set()
        wait_for(self.is_cut.is_set, 5, "the proxy to cut", 0.01)

    def restore(self):
        self.is_cut.clear()

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=5)


@pytest.fixture
def proxy(test_database_url):
    parts = urlsplit(test_database_url)
    running = CuttableProxy((parts.hostname, parts.port or 5432))
    yield running
    running.stop()


def test_requests_fail_cleanly_while_the_database_is_cut_and_succeed_after(
    live_study, base_env, processes, proxy
):
    parts = urlsplit(base_env["DATABASE_URL"])
    through_proxy = urlunsplit(parts._replace(netloc=f"{parts.username}@127.0.0.1:{proxy.port}"))
    port = free_port()
    processes.start(
        "gunicorn",
        gunicorn_command(port),
        {**base_env, "DATABASE_URL": through_proxy, "DB_CONN_MAX_AGE": "60"},
    )
    wait_for(lambda: gunicorn_up(port), 60, "gunicorn to answer")
    clients = [OutboxClient(port, player, timeout=10) for player in live_study.players[:4]]
    for client in clients:
        assert client.open_page()
    stop = threading.Event()

    def participant(client: OutboxClient):
        words = ["wing", "flow", "heat", "shock", "panel", "drag"]
        for n in range(300):  # bounded
            if stop.is_set():
                break
            query = client.enqueue("query", {"text": words[n % len(words)]})
            client.enqueue("results_page", {"query_event": query, "page": 2})
            if not client.flush():
                time.sleep(0.1)
        client.drain(30)

    threads = [threading.Thread(target=participant, args=(client,), daemon=True) for client in clients]
    for thread in threads:
        thread.start()
    time.sleep(2)
    proxy.cut()
    cut_at = time.monotonic()
    time.sleep(2)
    proxy.restore()
    restored_at = time.monotonic()
    time.sleep(3)
    stop.set()
    for thread in threads:
        thread.join(timeout=45)
    assert not any(thread.is_alive() for thread in threads)

    # Answered while cut (half a second after the cut, so that no request that had already finished its work
    # before the cut counts): all a clean 5xx.
    during = Counter(s for client in clients for t, s in client.statuses if cut_at + 0.5 <= t < restored_at)
    after = [s for client in clients for t, s in client.statuses if t >= restored_at + 1]
    assert during and all(isinstance(s, int) and s >= 500 for s in during), during  # no 4xx, no 200
    assert after and set(after) == {200}, Counter(after)
    assert all(not client.outbox for client in clients), (
        "events left unacknowledged after the database came back"
    )

    counts = stored_counts(clients)
    assert set(counts.values()) == {1}, {cid: n for cid, n in counts.items() if n != 1}
    assert all(client.acks[cid].get("ok") for client in clients for cid in client.sent)
    queries = Query.objects.filter(session__assignment__participant__study=live_study)
    with_results = set(ShownResult.objects.filter(query__in=queries).values_list("query_id", flat=True))
    logged = {
        e.payload["ack"]["query_id"]
        for e in Event.objects.filter(participant__study=live_study, type="query")
    }
    ids = set(queries.values_list("pk", flat=True))
    assert (
        ids and ids == with_results == logged
    )  # no Query without its results or its Event, and no orphan Event
