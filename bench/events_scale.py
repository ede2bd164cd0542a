"""The event log at scale (docs/performance-load.md, "The event log at scale"): the read paths of one study
with 100 thousand and with 10 million events in the log.

    .venv/bin/python bench/events_scale.py build --db postgres://postgres@127.0.0.1:5432/sl_events_100k \
        --events 100000
    .venv/bin/python bench/events_scale.py measure --db postgres://.../sl_events_100k --out /tmp/100k.json
    .venv/bin/python bench/events_scale.py report /tmp/100k-*.json /tmp/10m-*.json

`build` recreates the PostgreSQL database, migrates it, builds the measured study (the demo's simulated
participants, bench/events_scale_build.py) and background studies up to `--events` in all, then ANALYZE.
`measure` times, for the measured study, each read path a researcher uses (a scoring run as "Score the study"
starts it, Celery eager; each export, its streamed body consumed; the dashboards and the study's pages, signed
in; the API's participant, session and event pages) and the writer (batches of events through the participant
endpoint), the median of `--repeat` runs, with the log's table and index sizes and the EXPLAIN ANALYZE of each
path's slowest SELECT. `report` prints the two databases side by side (each path's median over the runs
given: alternate the databases' runs, the machine's speed drifts), and the plans of the paths that got
slower. Figures only: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
DEMO_SLUG = "demo-ecir-2008"
WRITER_BATCHES = 30
# The log's table and, when it is partitioned, its partitions (pg_partition_tree lists no plain table).
LOG_RELATIONS = (
    "(SELECT relid FROM pg_partition_tree('studies_event') UNION SELECT 'studies_event'::regclass) r"
)


def setup(db_url: str) -> None:
    os.environ["DATABASE_URL"] = db_url
    os.environ.setdefault("INDEX_ROOT", f"/tmp/{db_url.rsplit('/', 1)[-1]}-indexes")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sessionlab.settings")
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.pop("CELERY_BROKER_URL", None)  # eager: the run is timed in this process
    import django

    django.setup()


def build(db_url: str, events: int, participants: int) -> None:
    from django.core.management import call_command
    from events_scale_build import background_build, measured_study_build
    from load_study import database_recreate

    server, name = db_url.rsplit("/", 1)
    database_recreate(server, name)
    setup(db_url)
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    study = measured_study_build(participants)
    print(f"measured study: {participants} participants in {time.perf_counter() - started:.0f} s")
    background_build(study, events)


class QueryTimer:
    """Each SQL statement's time, through Django's execute wrapper."""

    def __init__(self):
        self.statements: list[tuple[float, str, object]] = []

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            if not many:
                self.statements.append(((time.perf_counter() - started) * 1000, sql, params))


def _explain(sql: str, params) -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def timed(name: str, action, repeat: int) -> dict:
    """The median of `repeat` runs of `action`, its statements, and the plan of the slowest SELECT."""
    from django.db import connection

    runs, timer = [], QueryTimer()
    for _ in range(repeat):
        timer.statements.clear()
        with connection.execute_wrapper(timer):
            started = time.perf_counter()
            action()
            runs.append((time.perf_counter() - started) * 1000)
    selects = [s for s in timer.statements if s[1].lstrip().upper().startswith("SELECT")]
    row: dict = {"ms": statistics.median(runs), "runs": runs, "statements": len(timer.statements)}
    if selects:
        ms, sql, params = max(selects, key=lambda s: s[0])
        row["slowest"] = {"ms": ms, "sql": sql[:2000], "explain": _explain(sql, params)}
    print(f"  {name:<42} {row['ms']:10.1f} ms  ({len(timer.statements)} statements)", flush=True)
    return row


def _get(client, url: str) -> int:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return len(body)


def read_paths(study, run) -> dict:
    """name -> a callable that opens the page (or downloads the export) as the study's researcher."""
    from django.test import Client
    from django.urls import reverse

    from scoring.dashboards.registry import CHARTS
    from studies.models import Participant, SearchSession

    client = Client()
    client.force_login(study.owner)
    # A simulated participant (not one the writer below enrolled): the first with a finished session.
    finished = Participant.objects.filter(study=study, assignments__session__ended_at__isnull=False)
    participant = finished.order_by("pk").first()
    session = SearchSession.objects.filter(assignment__participant=participant).order_by("pk").last()
    slug, api = study.slug, f"/api/studies/{study.pk}/"

    def charts():
        from django.core.cache import cache

        cache.clear()
        for chart in CHARTS:
            _get(client, reverse("scoring:chart_json", args=[slug, run.pk, chart]))

    pages = {
        "export: tables (CSV zip)": reverse("exports:tidy_csv", args=[slug]),
        "export: archive (JSON)": reverse("exports:archive", args=[slug]),
        "export: Session Track XML": reverse("exports:session_track", args=[slug]),
        "export: runs per query (zip)": reverse("exports:runs", args=[slug, "query"]),
        "page: study": reverse("studies:study_detail", args=[slug]),
        "page: downloads": reverse("exports:downloads", args=[slug]),
        "page: recruitment": f"/studies/{slug}/recruitment/",
        "page: reconciliation": f"/studies/{slug}/recruitment/reconciliation/",
        "dashboard: runs": reverse("scoring:runs", args=[slug]),
        "dashboard: run": reverse("scoring:run_detail", args=[slug, run.pk]),
        "API: participants": api + "participants/",
        "API: participant": api + f"participants/{participant.pk}/",
        "API: sessions": api + "sessions/",
        "API: session": api + f"sessions/{session.pk}/",
        "API: events, first page": api + "events/",
        "API: events of a participant": api + f"events/?participant={participant.code}",
        "API: events of a session": api + f"events/?session={session.pk}",
    }
    paths = {name: (lambda url=url: _get(client, url)) for name, url in pages.items()}
    paths[f"dashboard: {len(CHARTS)} charts, cold"] = charts
    return paths


def writer(study):
    """A started participant of the study, a callable posting one batch of five events (two documents
    opened and closed, a judgment) through the page's endpoint after a query batch (not timed), and one that
    withdraws the participant (their events deleted), so that the next run measures the same study."""
    from django.test import Client
    from load_study import ANSWERS

    from studies.design import services
    from studies.simulation.participants import first_search_start

    participant = services.participants_enrol(study=study, count=1)[0]
    session = first_search_start(participant=participant, answers=ANSWERS)
    client = Client()
    url = f"/p/{participant.access_token}/events/"
    seq = iter(range(1, 10**6))

    def post(events: list[dict]) -> list[dict]:
        stamped = [
            {"id": f"w-{n}", "seq": n, "session": session.pk, "time": int(time.time() * 1000), **event}
            for event, n in zip(events, seq, strict=False)
        ]
        response = client.post(url, json.dumps({"events": stamped}), content_type="application/json")
        assert response.status_code == 200, response.content[:300]
        return response.json()["acks"]

    ack = post([{"type": "query", "data": {"text": "boundary layer flow"}}])[0]
    docs = [r["doc"] for r in ack.get("results", [])][:2] or ["d1", "d2"]

    def batch():
        events = []
        for rank, doc in enumerate(docs, 1):
            events.append({"type": "document_open", "data": {"doc": doc, "rank": rank, "query": 1}})
            events.append(
                {"type": "document_close", "data": {"doc": doc, "rank": rank, "query": 1, "dwell_ms": 900}}
            )
        events.append({"type": "judgment", "data": {"doc": docs[0], "grade": 1}})
        post(events)

    def withdraw():
        from django.db import transaction

        from studies.participation.way.steps import participant_withdraw

        with transaction.atomic():
            participant_withdraw(participant=participant, by="researcher")

    return batch, withdraw


def sizes() -> dict:
    """The event log's rows and its tables' and indexes' sizes (summed over partitions, if any)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(pg_relation_size(relid)), 0), coalesce(sum(pg_indexes_size(relid)), 0) "
            f"FROM {LOG_RELATIONS}"
        )
        table, indexes = cursor.fetchone()
        cursor.execute(
            "SELECT i.indexrelid::regclass::text, pg_relation_size(i.indexrelid) FROM pg_index i "
            f"WHERE i.indrelid IN (SELECT relid FROM {LOG_RELATIONS}) ORDER BY 1"
        )
        each = dict(cursor.fetchall())
        cursor.execute("SELECT count(*) FROM studies_event")
        (rows,) = cursor.fetchone()
    return {"events": rows, "table_bytes": int(table), "index_bytes": int(indexes), "indexes": each}


@contextmanager
def _no_debug_log():
    from django.db import reset_queries

    reset_queries()
    yield
    reset_queries()


def measure(db_url: str, out: str, repeat: int) -> None:
    setup(db_url)
    from scoring_run import score  # bench/scoring_run.py

    from studies.models import Event, Study

    study = Study.objects.get(slug=DEMO_SLUG)
    figures = {"db": db_url.rsplit("/", 1)[-1], "sizes": sizes(), "paths": {}}
    own = Event.objects.filter(participant__study=study).count()
    print(f"{figures['db']}: {figures['sizes']['events']:,} events, the measured study's {own:,}")
    runs: list = []

    def scoring_run():
        runs.append(score(study, timeout=1800)[0])

    with _no_debug_log():
        figures["paths"]["score the study (eager)"] = timed("score the study (eager)", scoring_run, repeat)
    for name, action in read_paths(study, runs[-1]).items():
        with _no_debug_log():
            figures["paths"][name] = timed(name, action, repeat)
    batch, withdraw = writer(study)
    with _no_debug_log():
        figures["paths"]["writer: batch of 5 events"] = timed(
            "writer: batch of 5 events", batch, WRITER_BATCHES
        )
    withdraw()
    Path(out).write_text(json.dumps(figures, indent=1))
    print(f"written {out}")


def _merged(files: list[dict], best: bool) -> dict:
    """Several measurements of one database as one: each path's median over them, or with `best` the fastest
    (the machine is shared: a busy minute slows a run, nothing makes one faster; alternate the databases'
    runs), the last one's sizes and plans."""
    merged = dict(files[-1], paths={})
    for name, row in files[-1]["paths"].items():
        values = [f["paths"][name]["ms"] for f in files if name in f["paths"]]
        merged["paths"][name] = dict(row, ms=min(values) if best else statistics.median(values))
    return merged


def report(names: list[str], slower: float, best: bool) -> None:
    """The measurements in `names`, grouped by database, the smaller log first."""
    groups: dict[str, list[dict]] = {}
    for name in names:
        figures = json.loads(Path(name).read_text())
        groups.setdefault(figures["db"], []).append(figures)
    if len(groups) != 2:
        raise SystemExit(f"report compares two databases; the files name {len(groups)}: {', '.join(groups)}")
    a, b = sorted((_merged(files, best) for files in groups.values()), key=lambda f: f["sizes"]["events"])
    mb = 1024 * 1024
    rounds = f"{'best' if best else 'median'} of {len(groups[a['db']])} and {len(groups[b['db']])} runs"
    sizes = f"ms at {a['sizes']['events']:,} events | ms at {b['sizes']['events']:,}"
    print(f"| path ({rounds}) | {sizes} | ratio |")
    print("|---|---:|---:|---:|")
    for name, row in a["paths"].items():
        other = b["paths"].get(name)
        if other:
            print(f"| {name} | {row['ms']:.1f} | {other['ms']:.1f} | {other['ms'] / row['ms']:.2f} |")
    for figures in (a, b):
        s = figures["sizes"]
        print(
            f"\n{figures['db']}: table {s['table_bytes'] / mb:,.0f} MB, "
            f"indexes {s['index_bytes'] / mb:,.0f} MB: "
            + ", ".join(f"{n} {size / mb:,.0f} MB" for n, size in s["indexes"].items())
        )
    for name, row in b["paths"].items():
        first = a["paths"].get(name)
        if first and row["ms"] > slower * first["ms"] and row["ms"] - first["ms"] > 5 and "slowest" in row:
            print(
                f"\n### {name}: {first['ms']:.1f} -> {row['ms']:.1f} ms; "
                f"slowest SELECT {row['slowest']['ms']:.1f} ms"
            )
            print(row["slowest"]["sql"][:600])
            print(row["slowest"]["explain"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("build", "measure", "report"))
    parser.add_argument("files", nargs="*", help="report: measurements (JSON) of two databases, any number")
    parser.add_argument("--db", help="postgres://.../<database> (build recreates it)")
    parser.add_argument("--events", type=int, default=100_000, help="build: events in the log in all")
    parser.add_argument("--participants", type=int, default=40, help="build: the measured study's")
    parser.add_argument("--repeat", type=int, default=3, help="measure: runs per path (the median is shown)")
    parser.add_argument("--out", default="/tmp/events-scale.json", help="measure: where the figures go")
    parser.add_argument("--slower", type=float, default=1.5, help="report: plans of paths this much slower")
    parser.add_argument("--best", action="store_true", help="report: each path's fastest run, not the median")
    args = parser.parse_intermixed_args()
    if args.action == "build":
        build(args.db, args.events, args.participants)
    elif args.action == "measure":
        measure(args.db, args.out, args.repeat)
    else:
        report(args.files, slower=args.slower, best=args.best)


if __name__ == "__main__":
    main()
