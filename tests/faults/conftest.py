"""Fault tests: real processes (their own redis-server, Celery workers, gunicorn) against the test database.

They need PostgreSQL (DATABASE_URL) and a broker URL (CELERY_BROKER_URL), as in CI's second pass; elsewhere
they skip, saying so. In CI (CI=true) with those set, a service that cannot be reached fails them instead.
They never touch the shared Redis or worker: each test starts its own redis-server on a free port and its own
worker / gunicorn processes, in their own process groups, killed in teardown with bounded waits. Everything
listens on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from http.client import HTTPConnection, HTTPException
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def _skip_or_fail(message: str, *, fail_in_ci: bool):
    if IN_CI and fail_in_ci:
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def fault_services():
    """PostgreSQL and a broker configured (CI's pass 2),
    reachable, and a redis-server binary to start our own."""
    database = os.environ.get("DATABASE_URL", "")
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not database.startswith(("postgres://", "postgresql://")) or not broker:
        _skip_or_fail(
            "fault tests need PostgreSQL and Redis: set DATABASE_URL=postgres://... and "
            "CELERY_BROKER_URL=redis://... (CI's second pass does)",
            fail_in_ci=False,
        )
    configured = bool(database and broker)
    for name, url in (("PostgreSQL", database), ("Redis", broker)):
        parts = urlsplit(url)
        if not _reachable(
            parts.hostname or "127.0.0.1", parts.port or (5432 if name == "PostgreSQL" else 6379)
        ):
            _skip_or_fail(f"{name} at {parts.hostname}:{parts.port} cannot be reached", fail_in_ci=configured)
    if not shutil.which("redis-server"):
        _skip_or_fail(
            "the fault tests start their own redis-server, and none is installed", fail_in_ci=configured
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(predicate, seconds: float, what: str, interval: float = 0.2):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {seconds:g} s waiting for {what}")


# --- processes ------------------------------------------------------------------------------------------


class Process:
    """A subprocess in its own process group, logging to a file; stop() kills the group, bounded."""

    def __init__(self, name: str, command: list[str], env: dict, log_dir: Path):
        self.name, self.command, self.env = name, command, env
        self.log_path = log_dir / f"{name}-{uuid.uuid4().hex[:6]}.log"
        self.popen: subprocess.Popen | None = None

    def start(self) -> Process:
        log = open(self.log_path, "ab")  # noqa: SIM115 (kept open by the child)
        self.popen = subprocess.Popen(
            self.command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()
        return self

    @property
    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout: float = 10) -> None:
        if self.popen is None:
            return
        if self.popen.poll() is None:
            try:
                os.killpg(self.popen.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(timeout=5)
        # Children of a killed group leader (prefork pool, gunicorn workers) go with the group.
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.popen = None

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


@pytest.fixture
def processes(tmp_path):
    """Start processes with processes.start(name, command, env); all of them are stopped at teardown."""

    class Registry(list):
        def start(self, name, command, env):
            process = Process(name, command, env, tmp_path).start()
            self.append(process)
            return process

    started = Registry()
    yield started
    for process in reversed(started):
        process.stop(signal.SIGKILL, timeout=5)


class OwnRedis:
    def __init__(self, processes):
        self.processes, self.port, self.process = processes, free_port(), None

    def url(self, db: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> OwnRedis:
        self.process = self.processes.start(
            "redis",
            [
                shutil.which("redis-server"),
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
            ],
            os.environ.copy(),
        )
        wait_for(lambda: _reachable("127.0.0.1", self.port), 10, f"redis-server on port {self.port}", 0.05)
        return self

    def stop(self) -> None:
        self.process.stop(signal.SIGTERM, timeout=10)
        wait_for(lambda: not _reachable("127.0.0.1", self.port), 10, "redis-server to stop", 0.05)


@pytest.fixture
def own_redis(fault_services, processes):
    return OwnRedis(processes).start()


@pytest.fixture
def test_database_url(fault_services, transactional_db):
    """The URL of pytest-django's test database (test_<name>), for the subprocesses."""
    from django.db import connection

    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s.get("PASSWORD") else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@pytest.fixture
def index_root(settings, tmp_path):
    settings.INDEX_ROOT = tmp_path / "indexes"
    return settings.INDEX_ROOT


@pytest.fixture(scope="session")
def collected_static(tmp_path_factory) -> Path:
    """The static files as a deploy collects them (DEBUG off: hashed names and a manifest, which pages read),
    once for the session: gunicorn with DEBUG=0 renders no page without them."""
    root = tmp_path_factory.mktemp("static")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(DEBUG="0", SECRET_KEY="collectstatic-only", STATIC_ROOT=str(root), PYTHONPATH=str(ROOT))
    env["DJANGO_SETTINGS_MODULE"] = "sessionlab.settings"
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=300,
    )
    return root


@pytest.fixture
def base_env(test_database_url, own_redis, index_root, collected_static):
    """The environment of our subprocesses: the test database, our own Redis, quiet logs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "CACHE_URL"))}
    env.update(
        {
            "STATIC_ROOT": str(collected_static),
            "DATABASE_URL": test_database_url,
            "CELERY_BROKER_URL": own_redis.url(0),
            "CELERY_RESULT_BACKEND": own_redis.url(1),
            "INDEX_ROOT": str(index_root),
            "LOG_LEVEL": "WARNING",
            "DJANGO_SETTINGS_MODULE": "sessionlab.settings",
            "PYTHONPATH": str(ROOT),
            "DEBUG": "0",
            "SECRET_KEY": "fault-tests-" + uuid.uuid4().hex,
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "0",
            "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0",
            "SECURE_HSTS_SECONDS": "0",
        }
    )
    return env


def scored_study_build(study, participants: int):
    """`study` over 30 documents with `participants` participants' sessions and a reference version
    (tests/dashboards' build_study), for the tests that score it with real workers."""
    from studies.models import Collection, Document
    from tests.dashboards.conftest import build_study

    collection = Collection.objects.create(name=f"Fault collection {uuid.uuid4().hex[:6]}")
    Document.objects.bulk_create(
        Document(collection=collection, external_id=f"d{i}", title=f"Doc {i}") for i in range(30)
    )
    study.collection = collection
    study.save(update_fields=["collection"])
    return build_study(
        study, {d.external_id: d for d in collection.documents.all()}, participants=participants
    )


def worker_command(concurrency: int = 1) -> list[str]:
    return [
        str(BIN / "celery"),
        "-A",
        "sessionlab",
        "worker",
        "--concurrency",
        str(concurrency),
        "--loglevel",
        "INFO",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]


def worker_ready(process: Process) -> bool:
    return "ready." in process.log_tail(200)


def gunicorn_command(port: int, workers: int = 2, threads: int = 2) -> list[str]:
    return [
        str(BIN / "gunicorn"),
        "sessionlab.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--worker-class",
        "gthread",
        "--threads",
        str(threads),
        "--timeout",
        "30",
        "--graceful-timeout",
        "3",
        "--preload",
    ]


def gunicorn_up(port: int) -> bool:
    try:
        connection = HTTPConnection("127.0.0.1", port, timeout=2)
        connection.request("GET", "/accounts/login/")
        ok = connection.getresponse().status == 200
        connection.close()
        return ok
    except (OSError, HTTPException):
        return False


@pytest.fixture
def queue_to_own_redis(own_redis, monkeypatch):
    """Tasks this test process queues (scoring_run_create...) go to our own Redis, never to the shared one."""
    from celery import Celery

    from sessionlab import queueing

    # Celery reads CELERY_BROKER_URL from the environment before any argument or setting: drop it here.
    monkeypatch.delenv("CELERY_BROKER_URL", raising=False)
    monkeypatch.delenv("CELERY_RESULT_BACKEND", raising=False)
    # Not the current app: later tests' shared tasks must keep using the project's app, not this one,
    # whose Redis is gone by then.
    app = Celery("sessionlab-faults", broker=own_redis.url(0), backend=own_redis.url(1), set_as_current=False)
    assert app.conf.broker_url == own_redis.url(0)
    app.conf.task_serializer = "json"

    def delay_or_log(task, *args, on_failure=None):
        app.send_task(task.name, args=list(args), ignore_result=True)
        return True

    monkeypatch.setattr(queueing, "delay_or_log", delay_or_log)
    yield app
    app.close()


# --- a running study and a client with an outbox ----------------------------------------------------------


@pytest.fixture
def live_study(designed_study, index_root, transactional_db):
    """Alice's designed study over the generated 40-document collection, both indexes built under a temporary
    INDEX_ROOT, six participants consented, questionnaire answered and in their first search."""
    from studies.design import services
    from studies.models import Collection, Document
    from studies.search.systems import collection_index_build
    from studies.simulation.participants import first_search_start
    from tests.participation.conftest import make_documents

    collection = Collection.objects.create(name="Generated 40")
    Document.objects.bulk_create(
        Document(collection=collection, external_id=i, title=t, text=x) for i, t, x in make_documents()
    )
    designed_study.collection = collection
    designed_study.save(update_fields=["collection"])
    for configuration in ("bm25_title_text", "bm25_text"):
        collection_index_build(collection=collection, configuration=configuration)
    players = []
    answers = {"search_engine_years": 5, "domain_years": 3, "search_skill": 3}
    for participant in services.participants_enrol(study=designed_study, count=6):
        session = first_search_start(participant=participant, answers=answers)
        players.append({"pk": participant.pk, "token": participant.access_token, "session": session.pk})
    designed_study.players = players
    return designed_study


class OutboxClient:
    """A participant's page, reduced to its outbox: events wait until the server acknowledges them; a failed
    POST (connection refused or reset, timeout, 5xx) leaves them there to be re-sent. Stdlib HTTP only."""

    def __init__(self, port: int, player: dict, timeout: float = 5):
        self.port, self.player, self.timeout = port, player, timeout
        self.outbox: list[dict] = []
        self.sent: set[str] = set()
        self.acks: dict[str, dict] = {}
        self.statuses: list[tuple[float, int | str]] = []  # (time, HTTP status or error name)
        self.seq = 0
        self.cookie = ""
        self.csrf = ""

    def enqueue(self, kind: str, data: dict | None = None) -> str:
        self.seq += 1
        event = {
            "id": f"F{self.player['pk']}-{self.seq}-{uuid.uuid4().hex[:6]}",
            "seq": self.seq,
            "type": kind,
            "session": self.player["session"],
            "time": int(time.time() * 1000),
            "data": data or {},
        }
        self.outbox.append(event)
        self.sent.add(event["id"])
        return event["id"]

    def _request(self, method, path, body=None, headers=None):
        connection = HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.getheader("Set-Cookie") or "", response.read()
        finally:
            connection.close()

    def open_page(self) -> bool:
        try:
            status, cookie, _ = self._request("GET", f"/p/{self.player['token']}/")
        except (OSError, HTTPException) as exc:
            self.statuses.append((time.monotonic(), type(exc).__name__))
            return False
        self.statuses.append((time.monotonic(), status))
        if status == 200 and "csrftoken=" in cookie:
            self.csrf = cookie.split("csrftoken=", 1)[1].split(";", 1)[0]
            self.cookie = f"csrftoken={self.csrf}"
        return status == 200 and bool(self.csrf)

    def flush(self) -> bool:
        """POST one batch; True when the outbox is empty afterwards."""
        if not self.outbox:
            return True
        if not self.csrf and not self.open_page():
            return False
        batch = self.outbox[:50]
        try:
            status, _, body = self._request(
                "POST",
                f"/p/{self.player['token']}/events/",
                json.dumps({"events": batch}),
                {
                    "Content-Type": "application/json",
                    "X-CSRFToken": self.csrf,
                    "Cookie": self.cookie,
                    "Referer": f"http://127.0.0.1:{self.port}/",
                },
            )
        except (
            OSError,
            HTTPException,
        ) as exc:  # refused, reset, timed out, cut off mid-answer (IncompleteRead)
            self.statuses.append((time.monotonic(), type(exc).__name__))
            return False
        self.statuses.append((time.monotonic(), status))
        if status != 200:
            return False
        done = {}
        for ack in json.loads(body)["acks"]:
            if ack.get("id") and (ack.get("ok") or ack.get("refused") or ack.get("error")):
                done[ack["id"]] = ack
        self.acks.update(done)
        self.outbox = [e for e in self.outbox if e["id"] not in done]
        return not self.outbox

    def drain(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.flush():
                return True
            time.sleep(0.2)
        return not self.outbox


def stored_counts(clients) -> dict[str, int]:
    """{client event id: rows stored} for every id the clients sent."""
    from django.db.models import Count

    from studies.models import Event

    ids = [cid for client in clients for cid in client.sent]
    rows = Event.objects.filter(client_event_id__in=ids).values("client_event_id").annotate(n=Count("id"))
    counts = {cid: 0 for cid in ids}
    counts.update({row["client_event_id"]: row["n"] for row in rows})
    return counts
