"""Load benchmark: N concurrent participants against SessionLab served by gunicorn on PostgreSQL.

    .venv/bin/python bench/load.py [--participants 200] [--duration 60] [--workers 3] [--think 0.5] [--server-times]

It (re)creates the database `sessionlab_load` on the PostgreSQL server of $LOAD_PG_URL (default
postgres://postgres@127.0.0.1:5432), migrates it, builds a study over a generated collection (2,000 documents,
both built-in indexes), enrols N participants who have consented, answered the questionnaire and started their
first scenario, and serves it with gunicorn on 127.0.0.1 (Celery eager: no broker is involved in logging).

Each participant is an asyncio task with one keep-alive HTTP/1.1 connection (stdlib only) that behaves like
static/js/participant.js: it loads its search page (GET, which sets the CSRF cookie), then for the run's
duration issues queries, sometimes pages, opens documents (shown at once from the text the results carry),
closes them with a dwell time, judges some and marks where it stopped scanning, with the pauses of a real
session compressed. Events go to the browser's endpoint (POST /p/<token>/events/, X-CSRFToken) in batches with
client event ids, from an outbox that keeps each event until it is acknowledged: a query or a page is sent at
once (the page waits for its results); events the page does not wait on (opens, closes, judgments, scan marks)
leave with the next request or when participant.js's 3-second timer fires (scaled by --think, as every pause). A fraction of batches is sent
a second time (an acknowledgement lost on the way), which must store nothing twice.

It prints requests and events per second, p50/p95/p99 latency per endpoint, errors, and at the end counts
every event in the database against what was sent: lost (acknowledged but not stored), duplicated (a client
event id stored more than once), and stored-but-unacknowledged (sent when the run stopped).
Everything stays on 127.0.0.1; the run, the drain and the shutdown are bounded in time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ANSWERS = {
    "search_engine_years": 5,
    "domain_years": 3,
    "search_skill": 3,
}  # the questionnaire, as each answers it
LATER_SECONDS = 3.0  # participant.js LATER_MS: how long events the page does not wait on may wait to be sent
VOCABULARY = (
    "wing flow boundary layer shock heat transfer panel buckling shell pressure supersonic laminar turbulent "
    "nozzle jet drag lift vortex plate cylinder cone blunt body hypersonic wake separation stagnation point "
    "skin friction compressible viscous inviscid airfoil aspect ratio sweep delta thin thick transition "
    "reynolds mach number stability oscillation flutter load stress strain beam column creep fatigue crack "
    "temperature ablation radiation convection conduction injection cooling film porous wall slip rarefied "
    "gas kinetic molecule density velocity profile similarity solution integral method numerical experiment "
    "tunnel measurement probe gauge theory linear nonlinear perturbation small disturbance approximation"
).split()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(q / 100 * (len(ordered) - 1)))))
    return ordered[index]


# --- setup: the database, the study, the server ---------------------------------------------------------------


def database_recreate(server_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(f"{server_url}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    return f"{server_url}/{name}"


def study_build(n_participants: int, n_documents: int, seed: int = 2008) -> list[dict]:
    """The study, its collection and indexes, N participants each in their first scenario's search."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from studies.design import services
    from studies.models import Collection, Document
    from studies.participation.simulation import first_search_start
    from studies.search.systems import collection_index_build

    call_command("migrate", verbosity=0)
    rng = random.Random(seed)
    owner = get_user_model().objects.create_user("load-owner", password=uuid.uuid4().hex, is_staff=True)
    collection = Collection.objects.create(name=f"Generated {n_documents}", owner=owner)
    Document.objects.bulk_create(
        Document(
            collection=collection,
            external_id=f"d{n}",
            title=" ".join(rng.choices(VOCABULARY, k=6)),
            text=" ".join(rng.choices(VOCABULARY, k=120)),
        )
        for n in range(1, n_documents + 1)
    )
    study = services.study_create(
        owner=owner, name="Load study", consent_text="Consent.", collection=collection
    )
    for n in range(1, 5):
        services.scenario_add(
            study=study, code=f"S{n}", title=f"Scenario {n}", text=f"Find {n}", topic_id=str(n)
        )
    services.system_add(study=study, code="A", name="System A", config={"configuration": "bm25_title_text"})
    services.system_add(study=study, code="B", name="System B", config={"configuration": "bm25_text"})
    for configuration in ("bm25_title_text", "bm25_text"):
        collection_index_build(collection=collection, configuration=configuration)
    participants = services.participants_enrol(study=study, count=n_participants)
    grades = study.grade_values()
    players = []
    for participant in participants:
        session = first_search_start(participant=participant, answers=ANSWERS)
        players.append(
            {"pk": participant.pk, "token": participant.access_token, "session": session.pk, "grades": grades}
        )
    return players


def reference_loop_ms() -> float:
    """A fixed pure-Python workload, timed: how fast this machine is right now (best of three)."""
    best = float("inf")
    for _ in range(3):
        started, total = time.perf_counter(), 0
        for i in range(2_000_000):
            total += i * i % 7
        best = min(best, time.perf_counter() - started)
    return best * 1000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(database_url: str, index_root: str, conn_max_age: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND")}
    env.update(
        {
            "DATABASE_URL": database_url,
            "INDEX_ROOT": index_root,
            "DB_CONN_MAX_AGE": str(conn_max_age),
            "DEBUG": "0",
            "SECRET_KEY": "load-benchmark-" + uuid.uuid4().hex,
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "0",
            "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0",
            "SECURE_HSTS_SECONDS": "0",
            "LOG_LEVEL": "WARNING",
            "DJANGO_SETTINGS_MODULE": "sessionlab.settings",
        }
    )
    return env


def gunicorn_start(
    env: dict,
    port: int,
    workers: int,
    threads: int,
    log_path: Path,
    worker_class: str = "sync",
    times_path: Path | None = None,
) -> subprocess.Popen:
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        "sessionlab.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--worker-class",
        worker_class,
        "--backlog",
        "2048",
        "--timeout",
        "60",
        "--graceful-timeout",
        "5",
        "--preload",
    ]
    if times_path is not None:  # gunicorn's own time of each request, in microseconds, a line each
        command += ["--access-logfile", str(times_path), "--access-logformat", "%(D)s"]
    if worker_class == "gthread":
        command += ["--threads", str(threads), "--keep-alive", "30"]
    log = open(log_path, "wb")  # noqa: SIM115 (the server owns it for its lifetime)
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )


def gunicorn_stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)


def wait_listening(port: int, process: subprocess.Popen, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"gunicorn exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"gunicorn did not listen on 127.0.0.1:{port} within {seconds} s")


def cpu_seconds(pgid: int | None = None, name: str | None = None) -> float:
    """CPU time (user + system) used so far by the processes of a process group, or of every process with this
    command name (Linux /proc), with that of their children that have exited (a PostgreSQL backend ends when
    its web worker's connection reaches DB_CONN_MAX_AGE)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            head, tail = stat.read_text().rsplit(")", 1)
        except (OSError, ValueError):
            continue
        fields = tail.split()
        if (pgid is not None and int(fields[2]) == pgid) or (
            name is not None and head.split("(", 1)[1] == name
        ):
            total += sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime
    return total / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    usage = os.times()
    return usage.user + usage.system


# --- a small keep-alive HTTP/1.1 client (stdlib asyncio) ----------------------------------------------------


class HttpError(Exception):
    pass


class Connection:
    def __init__(self, port: int, timeout: float):
        self.port, self.timeout = port, timeout
        self.reader = self.writer = None
        self.cookies: dict[str, str] = {}

    async def close(self):
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except OSError:
                pass
        self.reader = self.writer = None

    async def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict | None = None
    ) -> tuple[int, bytes]:
        try:
            async with asyncio.timeout(self.timeout):  # no extra task per request, unlike wait_for
                return await self._request(method, path, body, headers or {})
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError) as exc:
            await self.close()
            raise HttpError(f"{type(exc).__name__}: {exc}") from None

    async def _request(self, method, path, body, headers):
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}", "Connection: keep-alive"]
        if self.cookies:
            lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        for name, value in headers.items():
            lines.append(f"{name}: {value}")
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b""))
        await self.writer.drain()
        status_line = await self.reader.readline()
        if not status_line:
            raise asyncio.IncompleteReadError(b"", None)
        status = int(status_line.split()[1])
        length, chunked, close = None, False, False
        while True:
            line = (await self.reader.readline()).decode("latin-1").strip()
            if not line:
                break
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "content-length":
                length = int(value)
            elif name == "transfer-encoding" and "chunked" in value.lower():
                chunked = True
            elif name == "connection" and value.lower() == "close":
                close = True
            elif name == "set-cookie":
                cookie = value.split(";", 1)[0]
                key, _, val = cookie.partition("=")
                self.cookies[key.strip()] = val.strip()
        if chunked:
            data = b""
            while True:
                size = int((await self.reader.readline()).strip(), 16)
                if size == 0:
                    await self.reader.readline()
                    break
                data += await self.reader.readexactly(size)
                await self.reader.readline()
        elif length is not None:
            data = await self.reader.readexactly(length)
        else:
            data = await self.reader.read()
            close = True
        if close:
            await self.close()
        return status, data


# --- a participant ---------------------------------------------------------------------------------------------


class Stats:
    def __init__(self):
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors: Counter = Counter()
        self.events_acked = 0
        self.events_refused = 0
        self.resent_batches = 0
        self.measuring = False
        self.window_events = 0
        self.window_requests = 0
        self.window_latency: list[float] = []
        self.loop_lag: list[float] = []


class Participant:
    def __init__(self, player: dict, port: int, stats: Stats, rng: random.Random, args):
        self.player, self.stats, self.rng, self.args = player, stats, rng, args
        self.http = Connection(port, timeout=args.request_timeout)
        self.events_url = f"/p/{player['token']}/events/"
        self.home_url = f"/p/{player['token']}/"
        self.seq = 0
        self.outbox: list[dict] = []
        self.sent: set[str] = set()
        self.acked: dict[str, dict] = {}
        self.later_at: float | None = None  # when the events that need no answer go, if no request takes them

    async def pause(self, low: float, high: float):
        """A participant's pause; the page's timer sends events waiting in the outbox when it is due."""
        end = time.monotonic() + self.rng.uniform(low, high) * self.args.think
        while self.later_at is not None and self.later_at <= end:
            await asyncio.sleep(max(0.0, self.later_at - time.monotonic()))
            self.later_at = None
            await self.flush()
        await asyncio.sleep(max(0.0, end - time.monotonic()))

    def enqueue(self, kind: str, data: dict, later: bool = False) -> str:
        """Queue an event; `later`: one the page does not wait on (participant.js LATER_MS, scaled by --think
        like every other pause)."""
        self.seq += 1
        event = {
            "id": f"L-{self.player['pk']}-{self.seq}-{uuid.uuid4().hex[:8]}",
            "seq": self.seq,
            "type": kind,
            "session": self.player["session"],
            "time": int(time.time() * 1000),
            "data": data,
        }
        self.outbox.append(event)
        self.sent.add(event["id"])
        if later and self.later_at is None:
            self.later_at = time.monotonic() + LATER_SECONDS * self.args.think
        return event["id"]

    async def home(self):
        started = time.perf_counter()
        try:
            status, _ = await self.http.request("GET", self.home_url)
        except HttpError as exc:
            if self.stats.measuring:
                self.stats.errors[f"GET /p/<token>/: {exc}"] += 1
            return
        self._record("GET /p/<token>/ (search page)", started, status)

    def _record(self, endpoint: str, started: float, status: int) -> None:
        if self.stats.measuring:
            took = time.perf_counter() - started
            self.stats.latency[endpoint].append(took)
            self.stats.window_latency.append(took)
            self.stats.window_requests += 1
            if status >= 400:
                self.stats.errors[f"{endpoint}: HTTP {status}"] += 1

    async def flush(self, resend: bool = False) -> bool:
        """POST the outbox (at most one batch); keep what was not acknowledged. True when all went."""
        batch = self.outbox[: self.args.batch]
        if not batch:
            return True
        self.later_at = None  # what was waiting goes with this request
        label = (
            "POST events (query/page)"
            if any(e["type"] in ("query", "results_page") for e in batch)
            else "POST events (open/close/judge/mark)"
        )
        body = json.dumps({"events": batch}).encode()
        headers = {
            "Content-Type": "application/json",
            "X-CSRFToken": self.http.cookies.get("csrftoken", ""),
            "Referer": f"http://127.0.0.1:{self.http.port}{self.home_url}",
        }
        for _ in range(
            2 if resend else 1
        ):  # a re-send: the first answer was "lost", the same batch goes again
            started = time.perf_counter()
            try:
                status, data = await self.http.request("POST", self.events_url, body, headers)
            except HttpError as exc:
                if self.stats.measuring:
                    self.stats.errors[f"{label}: {exc}"] += 1
                return False
            self._record(label, started, status)
            if status != 200:
                return False
        if resend:
            self.stats.resent_batches += 1
        acks = json.loads(data)["acks"]
        done = set()
        for ack in acks:
            if ack.get("id") and (ack.get("ok") or ack.get("refused") or ack.get("error")):
                done.add(ack["id"])
                if ack["id"] not in self.acked:
                    self.acked[ack["id"]] = ack
                    if ack.get("ok"):
                        if self.stats.measuring:
                            self.stats.window_events += 1
                        self.stats.events_acked += 1
                    else:
                        self.stats.events_refused += 1
        self.outbox = [e for e in self.outbox if e["id"] not in done]
        return not self.outbox

    async def send_and_wait(self, event_id: str, stop_at: float) -> dict | None:
        """Flush until `event_id` is acknowledged (bounded by count and by the end of the run)."""
        for attempt in range(20):
            if attempt and time.monotonic() >= stop_at:
                return None
            await self.flush(resend=self.rng.random() < self.args.resend)
            if event_id in self.acked:
                return self.acked[event_id]
            await asyncio.sleep(min(0.05 * 2**attempt, 1.0))
        return None

    async def run(self, stop_at: float):
        cycle = 0
        while time.monotonic() < stop_at:
            cycle += 1
            if cycle % 5 == 0:
                await self.home()  # a reload now and then (the page is the start of its step)
            words = self.rng.sample(VOCABULARY, self.rng.randint(1, 3))
            query_event = self.enqueue("query", {"text": " ".join(words)})
            ack = await self.send_and_wait(query_event, stop_at)
            if not ack or not ack.get("ok"):
                await self.pause(0.2, 0.5)
                continue
            results = ack.get("results") or []
            await self.pause(0.2, 0.6)
            if results and ack.get("total", 0) > 10 and self.rng.random() < 0.3:
                page = self.enqueue("results_page", {"query_event": query_event, "page": 2})
                page_ack = await self.send_and_wait(page, stop_at)
                results = (page_ack or {}).get("results") or results
                await self.pause(0.2, 0.5)
            for result in self.rng.sample(results, min(len(results), self.rng.randint(1, 3))):
                if time.monotonic() >= stop_at:
                    break
                # The results carry the documents' text: the page shows it at once, the open waits in the outbox.
                self.enqueue(
                    "document_open",
                    {"doc": result["doc"], "rank": result["rank"], "query_event": query_event},
                    later=True,
                )
                started = time.monotonic()
                await self.pause(0.3, 1.0)
                self.enqueue(
                    "document_close",
                    {
                        "doc": result["doc"],
                        "rank": result["rank"],
                        "query_event": query_event,
                        "dwell_ms": int((time.monotonic() - started) * 1000),
                    },
                    later=True,
                )
                if self.rng.random() < 0.7:
                    self.enqueue(
                        "judgment",
                        {"doc": result["doc"], "grade": self.rng.choice(self.player["grades"])},
                        later=True,
                    )
                await self.pause(0.1, 0.3)
            if results and self.rng.random() < 0.5:
                self.enqueue(
                    "scan_mark",
                    {"query_event": query_event, "rank": self.rng.choice(results)["rank"]},
                    later=True,
                )
            await self.pause(0.2, 0.6)

    async def drain(self, seconds: float):
        deadline = time.monotonic() + seconds
        while self.outbox and time.monotonic() < deadline:
            if not await self.flush():
                await asyncio.sleep(0.2)
        await self.http.close()


async def play(players: list[dict], port: int, args, server_pgid: int | None = None):
    stats = Stats()
    rng = random.Random(args.seed)
    clients = [Participant(p, port, stats, random.Random(rng.random()), args) for p in players]
    # Warm-up, not measured: every participant opens their search page (the CSRF cookie), all at once.
    warm = time.monotonic()
    await asyncio.gather(*(c.home() for c in clients))
    print(f"warm-up: {len(clients)} search pages in {time.monotonic() - warm:.1f} s")
    stats.measuring = True
    cpu_before = cpu_seconds(server_pgid) if server_pgid else 0.0
    postgres_before, own_before = cpu_seconds(name="postgres"), own_cpu_seconds()
    started = time.monotonic()
    stop_at = started + args.duration

    async def report():
        last = time.monotonic()
        while time.monotonic() < stop_at:
            await asyncio.sleep(min(args.report_every, max(0.1, stop_at - time.monotonic())))
            now = time.monotonic()
            print(
                f"  t={now - started:5.1f}s  {stats.window_events / (now - last):7.0f} events/s  "
                f"{stats.window_requests / (now - last):6.0f} requests/s  "
                f"p99 {percentile(stats.window_latency, 99) * 1000:6.0f} ms  errors {sum(stats.errors.values())}",
                flush=True,
            )
            stats.window_events = stats.window_requests = 0
            stats.window_latency = []
            last = now

    # Participants arrive over the first two seconds, as a class would.
    async def start(client, delay):
        await asyncio.sleep(delay)
        await client.run(stop_at)

    async def loop_lag():
        """How late this process's own event loop wakes up: a latency figure includes it, as a browser's would
        not (each participant has a machine of their own)."""
        while time.monotonic() < stop_at:
            before = time.monotonic()
            await asyncio.sleep(0.01)
            stats.loop_lag.append(time.monotonic() - before - 0.01)

    reporter = asyncio.create_task(report())
    lag = asyncio.create_task(loop_lag())
    await asyncio.gather(*(start(c, rng.uniform(0, 2)) for c in clients))
    await lag
    elapsed = time.monotonic() - started
    stats.measuring = False
    stats.server_cpu = cpu_seconds(server_pgid) - cpu_before if server_pgid else float("nan")
    stats.postgres_cpu = cpu_seconds(name="postgres") - postgres_before  # the local server's, whoever uses it
    stats.own_cpu = own_cpu_seconds() - own_before
    await reporter
    await asyncio.gather(*(c.drain(args.drain) for c in clients))
    return stats, clients, elapsed


def events_count(clients: list[Participant]) -> dict:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT participant_id, client_event_id, count(*) FROM studies_event "
            "WHERE client_event_id LIKE 'L-%%' GROUP BY participant_id, client_event_id"
        )
        rows = cursor.fetchall()
    stored = {(p, c): n for p, c, n in rows}
    sent = acked = lost = unacked_stored = unacked_missing = 0
    for client in clients:
        for cid in client.sent:
            sent += 1
            here = stored.get((client.player["pk"], cid), 0)
            if cid in client.acked:
                acked += 1
                lost += here == 0
            elif here:
                unacked_stored += 1
            else:
                unacked_missing += 1
    return {
        "sent": sent,
        "acked": acked,
        "stored": sum(stored.values()),
        "distinct": len(stored),
        "lost": lost,
        "duplicated": sum(n - 1 for n in stored.values()),
        "unacked_stored": unacked_stored,
        "unacked_not_stored": unacked_missing,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--duration", type=float, default=60, help="seconds of load (bounded: at most 600)")
    parser.add_argument(
        "--worker-class",
        choices=("sync", "gthread"),
        default="sync",
        help="sync: a worker takes a connection only when it is free, so the load spreads evenly "
        "(one request per connection); gthread keeps connections alive, but each stays on "
        "the worker that accepted it, however busy",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=3,
        help="gunicorn worker processes (3 on this 2-core machine gave a lower p99 than 2 or 4 in "
        "every paired run; 4 the most requests at saturation: docs/performance-load.md)",
    )
    parser.add_argument("--threads", type=int, default=2, help="gunicorn threads per worker (gthread only)")
    parser.add_argument("--conn-max-age", type=int, default=60, help="DB_CONN_MAX_AGE of the server")
    parser.add_argument("--batch", type=int, default=50, help="events per POST at most (participant.js: 50)")
    parser.add_argument(
        "--think",
        type=float,
        default=0.5,
        help="pause scale: 1 = a brisk real participant; 0.5 (200 participants offer about 1,000 "
        "events/s), 0.25 (about twice that: the server's capacity)",
    )
    parser.add_argument("--resend", type=float, default=0.05, help="share of batches sent twice")
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--drain", type=float, default=15, help="seconds to empty the outboxes after the run")
    parser.add_argument("--request-timeout", type=float, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--server-times",
        action="store_true",
        help="also print gunicorn's own time per request (an access log: a little more server CPU)",
    )
    parser.add_argument("--report-every", type=float, default=10, help="seconds between the running figures")
    parser.add_argument("--database", default="sessionlab_load")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    args = parser.parse_args(argv)
    args.duration = min(args.duration, 600)

    print(
        f"machine speed: a reference pure-Python loop takes {reference_loop_ms():.0f} ms (the figures below scale "
        "with it; it varied by a fifth within an hour on the VM of docs/performance-load.md)"
    )
    server_url = os.environ.get("LOAD_PG_URL", "postgres://postgres@127.0.0.1:5432").rstrip("/")
    if urlsplit(server_url).hostname not in ("127.0.0.1", "localhost"):
        raise SystemExit("LOAD_PG_URL must point at 127.0.0.1 (the benchmark stays on loopback)")
    database_url = database_recreate(server_url, args.database)
    index_root = tempfile.mkdtemp(prefix="sessionlab-load-indexes-")
    env = server_env(database_url, index_root, args.conn_max_age)
    # This process builds the study through the ORM with the server's settings (DEBUG=0 needs its SECRET_KEY).
    os.environ.update(
        {
            k: env[k]
            for k in (
                "DATABASE_URL",
                "INDEX_ROOT",
                "LOG_LEVEL",
                "DJANGO_SETTINGS_MODULE",
                "DEBUG",
                "SECRET_KEY",
            )
        }
    )
    for name in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):
        os.environ.pop(name, None)
    import django

    django.setup()
    started = time.monotonic()
    players = study_build(args.participants, args.documents)
    print(
        f"setup: database {args.database}, {args.documents} documents indexed, {len(players)} participants "
        f"in their first search ({time.monotonic() - started:.1f} s)"
    )

    port = free_port()
    log_path = Path(tempfile.gettempdir()) / "sessionlab-load-gunicorn.log"
    times_path = Path(tempfile.gettempdir()) / "sessionlab-load-times.log" if args.server_times else None
    if times_path is not None:
        times_path.unlink(missing_ok=True)
    server = gunicorn_start(env, port, args.workers, args.threads, log_path, args.worker_class, times_path)
    try:
        wait_listening(port, server)
        threads = f" x {args.threads} threads" if args.worker_class == "gthread" else ""
        print(
            f"gunicorn on 127.0.0.1:{port}: {args.workers} {args.worker_class} workers{threads}, "
            f"DB_CONN_MAX_AGE={args.conn_max_age}; {args.participants} participants for {args.duration:g} s, "
            f"think x{args.think}, batches <= {args.batch}, {args.resend:.0%} of batches re-sent"
        )
        stats, clients, elapsed = asyncio.run(play(players, port, args, server.pid))
    finally:
        gunicorn_stop(server)

    from django.db import connection

    connection.close()
    counts = events_count(clients)
    requests = sum(len(v) for v in stats.latency.values())
    print(f"\n=== {args.participants} participants, {elapsed:.1f} s ===")
    print(
        f"events acknowledged: {stats.events_acked} ({counts['acked']} incl. the drain) "
        f"= {stats.events_acked / elapsed:.0f} events/s during the run; refused {stats.events_refused}"
    )
    print(
        f"requests: {requests} = {requests / elapsed:.0f} requests/s; batches re-sent: {stats.resent_batches}"
    )
    print(
        f"gunicorn CPU: {stats.server_cpu:.1f} s over {elapsed:.1f} s = {stats.server_cpu / elapsed:.2f} cores; "
        f"{stats.server_cpu / max(requests, 1) * 1000:.1f} ms per request, "
        f"{stats.server_cpu / max(stats.events_acked, 1) * 1000:.1f} ms per event; machine: {os.cpu_count()} cores, "
        f"load average at the end {os.getloadavg()[0]:.1f} (other processes share them)"
    )
    print(
        f"PostgreSQL CPU: {stats.postgres_cpu / elapsed:.2f} cores, "
        f"{stats.postgres_cpu / max(requests, 1) * 1000:.1f} ms per request; "
        f"this load generator: {stats.own_cpu / elapsed:.2f} cores, its event loop late by "
        f"{percentile(stats.loop_lag, 50) * 1000:.1f} / {percentile(stats.loop_lag, 99) * 1000:.1f} ms (p50 / p99)"
    )
    print(f"{'endpoint':40} {'n':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for endpoint, values in sorted(stats.latency.items()):
        print(
            f"{endpoint:40} {len(values):7d} {percentile(values, 50) * 1000:8.1f} "
            f"{percentile(values, 95) * 1000:8.1f} {percentile(values, 99) * 1000:8.1f} {max(values) * 1000:8.1f}"
        )
    everything = [v for values in stats.latency.values() for v in values]
    print(
        f"{'all requests':40} {len(everything):7d} {percentile(everything, 50) * 1000:8.1f} "
        f"{percentile(everything, 95) * 1000:8.1f} {percentile(everything, 99) * 1000:8.1f}"
    )
    if times_path is not None:
        # Every request, the warm-up's and the drain's too: the time gunicorn spent on it, from its first byte
        # read to its last written, without the wait for a free worker that the figures above include.
        times = [int(line) / 1e6 for line in times_path.read_text().split()]
        print(
            f"{'  server time (gunicorn), every request':40} {len(times):7d} {percentile(times, 50) * 1000:8.1f} "
            f"{percentile(times, 95) * 1000:8.1f} {percentile(times, 99) * 1000:8.1f} {max(times) * 1000:8.1f}"
        )
    print(
        f"errors: {sum(stats.errors.values())}"
        + "".join(f"\n  {n} x {e}" for e, n in stats.errors.most_common(10))
    )
    print(
        f"events in the database: sent {counts['sent']} distinct ids, acknowledged {counts['acked']}, "
        f"stored rows {counts['stored']} ({counts['distinct']} distinct ids)"
    )
    print(
        f"lost (acknowledged, not stored): {counts['lost']}; duplicated: {counts['duplicated']}; "
        f"unacknowledged at the end: {counts['unacked_stored']} stored, {counts['unacked_not_stored']} not stored"
    )

    if not args.keep:
        import psycopg

        with psycopg.connect(f"{server_url}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')
    return 1 if counts["lost"] or counts["duplicated"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
