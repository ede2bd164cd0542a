"""Multi-node test, in CI's PostgreSQL pass: two gunicorn web nodes started from two copies of the
checkout and a Celery worker from a third (tests/cluster/local_cluster.py), sharing only PostgreSQL, Redis
(broker, results, cache) and an S3-compatible store (moto's server). With DEBUG off, as production runs:

- a researcher uploads Cranfield through node 1's form; the worker (another disk) imports it from the store;
- a participant's first query on node 2, whose disk has no index, is answered "retry later" and stored as
  nothing; node 2 builds its copy and the same query is answered; node 1 likewise;
- the participant's events alternate between the nodes, a batch each: each stored once, in order;
- a scoring run asked on node 1 is scored by the worker, its progress read on node 2;
- the export downloaded from node 2 holds the session logged through both;
- both nodes are ready (/health/ready), each holding the database's current indexes;
- two beats, from two copies, send the overdue sweep each interval; it runs once per interval.

Skipped without PostgreSQL and a Redis broker (the SQLite pass); a failure in CI's second pass."""

from __future__ import annotations

import io
import os
import re
import time
import zipfile
from urllib.parse import urlsplit

import psycopg
import pytest
import requests

from tests.cluster.local_cluster import (
    ROOT,
    beat,
    checkout_copy,
    free_port,
    manage,
    node_environment,
    web_node,
    worker,
)

pytestmark = pytest.mark.needs_worker  # run serially, before the parallel run: it starts five processes

REDIS_DBS = {"broker": 2, "results": 3, "cache": 4}  # CI's own worker uses 0 and 1
DATABASE = "sessionlab_cluster"
SWEEP_SECONDS = 10  # the beats' interval here (OVERDUE_SWEEP_SECONDS): a turn lasts 8 s
ANSWERS = {"search_engine_years": 5, "domain_years": 3, "search_skill": 3}


def _services_or_skip() -> tuple[str, str]:
    """The PostgreSQL server and the Redis of CI's second pass (DATABASE_URL, CELERY_BROKER_URL)."""
    database, broker = os.environ.get("DATABASE_URL", ""), os.environ.get("CELERY_BROKER_URL", "")
    if not database.startswith("postgres") or not broker.startswith("redis"):
        if broker and os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail("CI's second pass sets a broker: the multi-node test needs PostgreSQL and Redis")
        pytest.skip(
            "the multi-node test needs PostgreSQL (DATABASE_URL) and Redis (CELERY_BROKER_URL): "
            "CI's second pass"
        )
    server = urlsplit(database)
    redis = urlsplit(broker)
    return f"{server.scheme}://{server.netloc}", f"{redis.scheme}://{redis.netloc}"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    postgres, redis = _services_or_skip()
    import redis as redis_client
    from moto.server import ThreadedMotoServer

    for number in REDIS_DBS.values():
        redis_client.Redis.from_url(f"{redis}/{number}").flushdb()
    with psycopg.connect(f"{postgres}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{DATABASE}"')
    s3_port = free_port()
    s3 = ThreadedMotoServer(ip_address="127.0.0.1", port=s3_port, verbose=False)
    s3.start()
    import boto3

    endpoint = f"http://127.0.0.1:{s3_port}"
    boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    ).create_bucket(Bucket="uploads")
    env = node_environment(
        DATABASE_URL=f"{postgres}/{DATABASE}",
        DB_CONN_MAX_AGE="0",
        CELERY_BROKER_URL=f"{redis}/{REDIS_DBS['broker']}",
        CELERY_RESULT_BACKEND=f"{redis}/{REDIS_DBS['results']}",
        CACHE_URL=f"{redis}/{REDIS_DBS['cache']}",
        UPLOAD_STORAGE_URL=f"s3://uploads/sessionlab?endpoint_url={endpoint}&region_name=us-east-1",
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_EC2_METADATA_DISABLED="true",
        OVERDUE_SWEEP_SECONDS=str(SWEEP_SECONDS),
        HEALTH_TOKEN="cluster-health",  # an operator's monitoring reads the checks' details with it
    )
    copies = [checkout_copy(tmp_path_factory.mktemp(f"host{n}")) for n in (1, 2, 3)]
    manage(copies[0], env, "migrate", "--noinput", "--verbosity", "0")
    manage(
        copies[0],
        env,
        "shell",
        "-c",
        "from django.contrib.auth.models import User; "
        "User.objects.create_user('alice', password='alice-password', is_staff=True)",
    )
    processes = [
        web_node("node1", copies[0], env),
        web_node("node2", copies[1], env),
        worker("worker", copies[2], env),
    ]
    try:
        for process in processes:
            process.start()
        for node in processes[:2]:
            node.wait_ready()
        yield {
            "nodes": processes[:2],
            "worker": processes[2],
            "copies": copies,
            "env": env,
            "postgres": postgres,
        }
    finally:
        for process in processes:
            process.stop()
        s3.stop()
        with psycopg.connect(f"{postgres}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')


def _cranfield_zip() -> bytes:
    buffer = io.BytesIO()
    folder = ROOT / "studies" / "demo_data" / "cranfield"
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name in ("cran.all.1400", "cran.qry", "cranqrel"):
            zipped.writestr(f"cranfield/{name}", (folder / name).read_bytes())
    return buffer.getvalue()


def _signed_in(node) -> requests.Session:
    """A researcher's browser on `node`: the sign-in form, its CSRF cookie and token."""
    browser = requests.Session()
    browser.get(f"{node.url}/accounts/login/", timeout=30)
    answer = browser.post(
        f"{node.url}/accounts/login/",
        data={
            "username": "alice",
            "password": "alice-password",
            "csrfmiddlewaretoken": browser.cookies["csrftoken"],
        },
        headers={"Referer": f"{node.url}/accounts/login/"},
        timeout=30,
    )
    assert answer.status_code == 200 and "/accounts/login/" not in answer.url, answer.text[:500]
    return browser


def _until(what: str, probe, seconds: float = 120, every: float = 0.5):
    """Call `probe` until it returns something true; that value, or a failure naming `what`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(every)
    pytest.fail(f"{what}: not within {seconds} s")


def _upload_on(node, researcher: requests.Session) -> int:
    page = researcher.get(f"{node.url}/collections/", timeout=30)
    answer = researcher.post(
        f"{node.url}/collections/upload/",
        data={
            "name": "Cranfield",
            "format": "cranfield",
            "csrfmiddlewaretoken": researcher.cookies["csrftoken"],
        },
        files={"documents": ("cranfield.zip", _cranfield_zip(), "application/zip")},
        headers={"Referer": page.url},
        timeout=60,
    )
    found = re.search(r"/collections/uploads/(\d+)/", answer.url)
    assert answer.status_code == 200 and found, answer.text[:1000]
    return int(found.group(1))


def _study_on(node, token: str, collection: int) -> tuple[int, str]:
    """Through the researcher API: a study on the collection, two built-in systems, two scenarios, two
    participants; the first participant's private token."""
    api = requests.Session()
    api.headers["Authorization"] = f"Token {token}"

    def post(path, body):
        answer = api.post(f"{node.url}/api/{path}", json=body, timeout=30)
        assert answer.status_code == 201, (path, answer.status_code, answer.text[:500])
        return answer.json()

    study = post("studies/", {"name": "Across nodes", "collection": collection, "consent_text": "Consent."})
    base = f"studies/{study['id']}/"
    for code, configuration in (("A", "bm25_title_text"), ("B", "bm25_text")):
        post(
            base + "systems/",
            {"code": code, "name": f"System {code}", "config": {"configuration": configuration}},
        )
    for topic in ("1", "2"):
        post(
            base + "scenarios/",
            {"code": f"S{topic}", "title": f"Topic {topic}", "topic_id": topic, "text": "Find."},
        )
    opened = api.post(f"{node.url}/api/{base}status/", json={"status": "open"}, timeout=30)
    assert opened.status_code == 200, opened.text[:500]  # a new study is a draft until opened
    participants = post(base + "participants/enrol/", {"count": 2})
    return study["id"], participants[0]["access_token"]


class Participant:
    """A front-end on the participant API, sending each call to the node it is given."""

    def __init__(self, token: str):
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"Participant {token}"
        self.seq = 0

    def post(self, node, path: str, body: dict) -> requests.Response:
        return self.http.post(f"{node.url}/api/participant/{path}", json=body, timeout=60)

    def event(self, node, session: int, kind: str, **data) -> dict:
        """One event in a batch of its own; its acknowledgement."""
        self.seq += 1
        event = {"id": f"E{self.seq}", "type": kind, "session": session, "seq": self.seq, "data": data}
        answer = self.post(node, "events/", {"events": [event]})
        assert answer.status_code == 200, answer.text[:500]
        (ack,) = answer.json()["acks"]
        return ack

    def query(self, node, session: int, text: str) -> tuple[dict, int]:
        """A query sent again after each "retry later", as the outbox does, under the same event id; the
        acknowledgement and how many times it was answered "retry later"."""
        self.seq += 1
        event = {
            "id": f"E{self.seq}",
            "type": "query",
            "session": session,
            "seq": self.seq,
            "data": {"text": text},
        }
        retries = 0
        for _ in range(120):
            (ack,) = self.post(node, "events/", {"events": [event]}).json()["acks"]
            if not ack.get("retry_later"):
                return ack, retries
            retries += 1
            time.sleep(0.5)
        pytest.fail(f"the query on {node.name} was still 'retry later' after 60 s: {ack}")


def _rows(cluster, sql: str, *parameters) -> list[tuple]:
    with psycopg.connect(f"{cluster['postgres']}/{DATABASE}") as connection:
        return connection.execute(sql, parameters).fetchall()


def test_two_web_nodes_and_a_worker_share_only_the_services(cluster):
    node1, node2 = cluster["nodes"]
    copies = cluster["copies"]

    # Upload on node 1; the worker imports it from the object store and builds its own indexes.
    researcher = _signed_in(node1)
    upload = _upload_on(node1, researcher)
    on_node2 = _signed_in(node2)
    state = _until(
        "the upload's import by the worker",
        lambda: (lambda s: s if s["finished"] else None)(
            on_node2.get(f"{node2.url}/collections/uploads/{upload}/status.json", timeout=30).json()
        ),
    )
    assert state["status"] == "done", state
    assert "1400 documents" in state["stage"], state
    assert "collection_upload_process_task" in cluster["worker"].log()
    ((collection,),) = _rows(
        cluster, "SELECT collection_id FROM studies_collectionupload WHERE id = %s", upload
    )
    for copy in copies[:2]:  # neither web node has an index yet: only the worker's disk does
        assert not (copy / "indexes" / f"collection-{collection}").exists()
    assert (copies[2] / "indexes" / f"collection-{collection}" / "bm25_title_text").is_dir()

    token = requests.post(
        f"{node2.url}/api/auth/token/", json={"username": "alice", "password": "alice-password"}, timeout=30
    ).json()["token"]
    study, access = _study_on(node2, token, collection)

    # The participant consents on node 1, answers on node 2, starts the first task on node 1.
    person = Participant(access)
    consent = {"decision": "agree", "consent_version": "1", "client_event_id": "c1"}
    for node, path, body in (
        (node1, "consent/", consent),
        (node2, "questionnaire/", {"answers": ANSWERS, "client_event_id": "q1"}),
    ):
        answer = person.post(node, path, body)
        assert answer.status_code in (200, 201), (path, answer.text[:500])
    started = person.post(node1, "sessions/", {"assignment": 1, "client_event_id": "s1"})
    assert started.status_code == 201, started.text[:500]
    session = started.json()["id"]

    # Search on node 2, which has no index: "retry later" (nothing stored) until it has built its copy.
    first, retries = person.query(node2, session, "boundary layer")
    assert retries >= 1, "node 2 answered before it had an index"
    assert first["ok"] and len(first["results"]) == 10, first
    second, _ = person.query(node1, session, "boundary layer flow")
    assert second["ok"] and second["results"], second
    assert _rows(cluster, "SELECT count(*) FROM studies_query WHERE session_id = %s", session) == [(2,)]

    # Events alternate between the nodes, a batch each.
    nodes = [node2, node1]
    doc = first["results"][0]["doc"]
    acks = [
        person.event(nodes[0], session, "document_open", doc=doc, query=1, rank=1),
        person.event(nodes[1], session, "document_close", doc=doc, query=1, rank=1, dwell_ms=4000),
        person.event(nodes[0], session, "judgment", doc=doc, grade=2),
        person.event(nodes[1], session, "scan_mark", query=2, rank=3),
        person.event(nodes[0], session, "session_end", reason="satisfied"),
    ]
    assert all(ack.get("ok") for ack in acks), acks
    stored = _rows(
        cluster,
        "SELECT client_event_id, count(*) FROM studies_event"
        " WHERE session_id = %s AND client_event_id LIKE 'E%%' GROUP BY client_event_id ORDER BY min(id)",
        session,
    )
    assert stored == [(f"E{n}", 1) for n in range(1, 8)], stored

    # Scoring asked on node 1, run by the worker, followed on node 2.
    api = requests.Session()
    api.headers["Authorization"] = f"Token {token}"
    qrels = "".join(f"1 0 {hit['doc']} {3 - rank // 4}\n" for rank, hit in enumerate(first["results"]))
    reference = api.post(
        f"{node2.url}/api/studies/{study}/reference-versions/import-qrels/",
        files={"file": ("reference.qrels", qrels)},
        timeout=30,
    )
    assert reference.status_code == 201, reference.text[:500]
    run = api.post(f"{node1.url}/api/studies/{study}/scoring-runs/", json={}, timeout=30)
    assert run.status_code == 201, run.text[:500]
    run_url = f"{node2.url}/api/studies/{study}/scoring-runs/{run.json()['id']}/"
    done = _until(
        "the scoring run",
        lambda: (lambda r: r if r["status"] in ("done", "failed") else None)(
            api.get(run_url, timeout=30).json()
        ),
    )
    assert done["status"] == "done", done
    scores = api.get(run_url + "sessions/", timeout=30).json()
    rows = scores["results"] if isinstance(scores, dict) else scores
    assert [row["session"] for row in rows] == [session] and rows[0]["n_queries"] == 2, rows
    assert "scoring.tasks.scoring_run_finish_task" in cluster["worker"].log()

    # The export from node 2 holds the session logged through both.
    tables = api.get(f"{node2.url}/api/studies/{study}/tables/", timeout=60)
    assert tables.status_code == 200, tables.text[:500]
    with zipfile.ZipFile(io.BytesIO(tables.content)) as zipped:
        sessions_csv = zipped.read(next(n for n in zipped.namelist() if n.endswith("sessions.csv"))).decode()
        queries_csv = zipped.read(next(n for n in zipped.namelist() if n.endswith("queries.csv"))).decode()
    assert "satisfied" in sessions_csv and "boundary layer flow" in queries_csv

    # Both nodes ready, each holding the database's current indexes it searched with.
    for node in (node1, node2):
        answer = requests.get(
            f"{node.url}/health/ready", headers={"Authorization": "Bearer cluster-health"}, timeout=30
        )
        assert answer.status_code == 200, answer.text
        indexes = answer.json()["checks"]["search_indexes"]
        assert indexes["current"] >= 1 and indexes["stale"] == 0, (node.name, indexes)

    _two_beats_one_sweep(cluster)


def _two_beats_one_sweep(cluster) -> None:
    """Two beats from two copies, started together, each send the sweep every SWEEP_SECONDS; the worker runs
    one of each pair and skips the other."""
    beats = [
        beat("beat1", cluster["copies"][0], cluster["env"]),
        beat("beat2", cluster["copies"][1], cluster["env"]),
    ]
    try:
        for process in beats:
            process.start()
        log = cluster["worker"]
        sweeps = re.compile(r"studies\.tasks\.overdue_sweep_task\[[^\]]+\] succeeded in [^:]+: (\{.*\})")
        _until(
            "four sweeps sent by the two beats",
            lambda: len(sweeps.findall(log.log())) >= 4,
            seconds=SWEEP_SECONDS * 4,
        )
    finally:
        for process in beats:
            process.stop()
    results = sweeps.findall(cluster["worker"].log())
    skipped = [r for r in results if "'skipped': 1" in r]
    ran = [r for r in results if "'skipped'" not in r]
    for process in beats:
        assert "Sending due task sweep-overdue-participants" in process.log(), process.log()[-2000:]
    assert skipped and len(ran) <= (len(results) + 1) // 2, results
