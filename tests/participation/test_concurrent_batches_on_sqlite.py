"""On the embedded default (SQLite in a file), two event batches arriving together never answer 500
"database is locked": a closing tab sends a beacon and a fetch at once, and several participants log at the
same moment. A real gunicorn (3 workers) serves a file-backed SQLite database built for this test; pairs of
batches are sent at the same instant, for one participant and for several, and every event is stored once.

Before write transactions took their lock at BEGIN (transaction_mode IMMEDIATE), a batch that had read under
a shared lock could not wait for the writer ahead of it: 5 of 20 pairs for one participant answered 500."""

from __future__ import annotations

import http.client
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tests.faults.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

SETTINGS = """
import os
from tests.settings import *  # noqa: F403
if os.environ.get("EV_NO_MIGRATIONS"):  # the suite runs with --nomigrations: build the tables the same way
    MIGRATION_MODULES = {"studies": None, "scoring": None}
"""

SETUP = """
import json, shutil
import django
django.setup()
from studies.design import services
from studies.search.engines.formats import Document as Parsed
from studies.search.engines.search import build_index
from studies.models import Collection, Document
from studies.search.systems import collection_index_dir
from django.contrib.auth import get_user_model
from tests.participation.conftest import make_documents, start

owner = get_user_model().objects.create_user("alice", password="x", is_staff=True)
study = services.study_create(owner=owner, name="Concurrency", consent_text="Consent.", status="open")
for n in range(1, 5):
    services.scenario_add(study=study, code=f"S{n}", title=f"S{n}", text=f"Scenario {n}", topic_id=str(n))
services.system_add(study=study, code="A", name="A", config={"configuration": "bm25_title_text"})
services.system_add(study=study, code="B", name="B", config={"configuration": "bm25_text"})
collection = Collection.objects.create(name="Generated 40")
Document.objects.bulk_create(Document(collection=collection, external_id=i, title=t, text=x)
                             for i, t, x in make_documents())
study.collection = collection
study.save(update_fields=["collection"])
for configuration in ("bm25_title_text", "bm25_text"):
    build_index([Parsed(i, t, x) for i, t, x in make_documents()],
                collection_index_dir(collection=collection, configuration=configuration), configuration)
people = []
for participant in services.participants_enrol(study=study, count=4):
    session = start(participant)
    people.append({"token": participant.access_token, "session": session.pk})
print(json.dumps(people))
"""


@pytest.fixture
def server(tmp_path, request):
    """gunicorn on a file-backed SQLite database with the project's settings; yields (port, people, db)."""
    (tmp_path / "ev_sqlite_settings.py").write_text(SETTINGS)
    database = tmp_path / "db.sqlite3"
    env = {
        **os.environ,
        "PYTHONPATH": f"{tmp_path}:{ROOT}",
        "DJANGO_SETTINGS_MODULE": "ev_sqlite_settings",
        "SQLITE_PATH": str(database),
        "INDEX_ROOT": str(tmp_path / "indexes"),
        "DEBUG": "1",
    }
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL"):
        env.pop(name, None)
    if request.config.getoption("nomigrations", False):  # build the tables as the suite's own database
        env["EV_NO_MIGRATIONS"] = "1"
    migrate = [str(BIN / "python"), "manage.py", "migrate", "--run-syncdb", "-v", "0"]
    subprocess.run(migrate, cwd=ROOT, env=env, check=True, timeout=300)
    setup = subprocess.run(
        [str(BIN / "python"), "-c", textwrap.dedent(SETUP)],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=300,
        capture_output=True,
        text=True,
    )
    people = json.loads(setup.stdout.strip().splitlines()[-1])
    port = free_port()
    log = open(tmp_path / "gunicorn.log", "wb")  # noqa: SIM115 (the child keeps it)
    process = subprocess.Popen(
        [str(BIN / "gunicorn"), "-w", "3", "-b", f"127.0.0.1:{port}", "sessionlab.wsgi"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                http.client.HTTPConnection("127.0.0.1", port, timeout=2).request("GET", "/accounts/login/")
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    pytest.fail("gunicorn did not start: " + (tmp_path / "gunicorn.log").read_text()[-2000:])
                time.sleep(0.2)
        yield port, people, database
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)
        log.close()


def _post(port, token, events) -> tuple[int, dict | str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request(
        "POST",
        "/api/participant/events/",
        json.dumps({"events": events}),
        {"Content-Type": "application/json", "Authorization": f"Participant {token}"},
    )
    response = connection.getresponse()
    body = response.read().decode()
    try:
        return response.status, json.loads(body)
    except ValueError:
        return response.status, body[:500]


def _together(port, sends) -> list[tuple[int, dict | str]]:
    """Each (token, events) posted from its own thread, released at the same instant."""
    barrier, answers = threading.Barrier(len(sends)), [None] * len(sends)

    def send(slot, token, events):
        barrier.wait(timeout=30)
        answers[slot] = _post(port, token, events)

    threads = [threading.Thread(target=send, args=(n, *pair)) for n, pair in enumerate(sends)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return answers


def _batch(person, prefix):
    session = person["session"]
    return [
        {"id": f"{prefix}-q", "type": "query", "session": session, "data": {"text": "wing heat"}},
        {
            "id": f"{prefix}-p",
            "type": "results_page",
            "session": session,
            "data": {"query_event": f"{prefix}-q", "page": 2},
        },
        {"id": f"{prefix}-t", "type": "tab_hidden", "session": session, "data": {"n": 1}},
    ]


def _stored(database) -> set[str]:
    with sqlite3.connect(database) as db:
        return {row[0] for row in db.execute("SELECT client_event_id FROM studies_event")}


def test_paired_batches_for_one_and_for_several_participants_are_all_stored(server):
    port, people, database = server
    sent: set[str] = set()
    answers = []
    for round_ in range(12):
        # One participant: the beacon and the fetch of a closing tab (the same events) plus another batch.
        one = people[0]
        same = _batch(one, f"a{round_}")
        answers += _together(
            port, [(one["token"], same), (one["token"], same), (one["token"], _batch(one, f"b{round_}"))]
        )
        sent |= {e["id"] for e in same} | {e["id"] for e in _batch(one, f"b{round_}")}
        # Several participants at once.
        several = [(p["token"], _batch(p, f"c{round_}-{n}")) for n, p in enumerate(people[1:])]
        answers += _together(port, several)
        sent |= {e["id"] for _, events in several for e in events}
    statuses = [status for status, _ in answers]
    assert statuses == [200] * len(answers), [body for status, body in answers if status != 200][:3]
    assert all(ack["ok"] for _, body in answers for ack in body["acks"]), answers
    stored = _stored(database)
    assert sent <= stored
    with sqlite3.connect(database) as db:
        (events,) = db.execute(
            "SELECT count(*) FROM studies_event WHERE type IN ('query', 'results_page', 'tab_hidden')"
        ).fetchone()
        (queries,) = db.execute("SELECT count(*) FROM studies_query").fetchone()
    assert events == len(sent) and queries == len(sent) // 3  # each once
