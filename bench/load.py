"""Load benchmark: N concurrent participants against SessionLab served by gunicorn on PostgreSQL.

    .venv/bin/python bench/load.py [--participants 200] [--duration 60] [--workers 3] [--think 0.5]
        [--server-times] [--nodes 2]

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
leave with the next request or when participant.js's 3-second timer fires (scaled by --think, as every
pause). A fraction of batches is sent a second time (an acknowledgement lost on the way), which must store
nothing twice.

It prints requests and events per second, p50/p95/p99 latency per endpoint, errors, and at the end counts
every event in the database against what was sent: lost (acknowledged but not stored), duplicated (a client
event id stored more than once), and stored-but-unacknowledged (sent when the run stopped).
Everything stays on 127.0.0.1; the run, the drain and the shutdown are bounded in time.

With --nodes N (2 or more) the server is N gunicorn nodes, each from a copy of the checkout of its own (no
shared disk), behind a round-robin TCP balancer (load_balancer.py), and the figures are also given per node:
requests served, gunicorn's own time per request, CPU (load_nodes.py).

The parts, beside this file: load_study.py (the database and the study), load_server.py (gunicorn and CPU
time), load_http.py (the HTTP client), load_participant.py (a participant and the run), load_report.py (the
figures), load_nodes.py and load_balancer.py (--nodes).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
# Run as a script, bench/ is already on the path; appended, never first: bench/scoring.py would shadow the
# scoring package.
if str(HERE) not in sys.path:
    sys.path.append(str(HERE))

from load_nodes import nodes_print, serve_nodes_and_play  # noqa: E402
from load_participant import play  # noqa: E402
from load_report import events_count, report_print  # noqa: E402
from load_server import (  # noqa: E402
    free_port,
    gunicorn_start,
    gunicorn_stop,
    reference_loop_ms,
    server_env,
    static_collect,
    wait_listening,
)
from load_study import database_drop, database_recreate, study_build  # noqa: E402


def arguments(argv=None) -> argparse.Namespace:
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
    parser.add_argument(
        "--no-exposure",
        dest="exposure",
        action="store_false",
        help="leave out what the page reports beyond actions (an exposure report per results page, "
        "a stretch away now and then): the event mix before them",
    )
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
    parser.add_argument(
        "--nodes",
        type=int,
        default=1,
        help="web nodes, each from a copy of the checkout, behind a round-robin balancer (figures per node); "
        "--workers is per node",
    )
    args = parser.parse_args(argv)
    if args.nodes < 1:
        parser.error("--nodes must be at least 1")
    args.duration = min(args.duration, 600)
    return args


def django_setup(env: dict) -> None:
    """This process builds the study through the ORM with the server's settings (DEBUG=0 needs its
    SECRET_KEY), and logs with Celery eager as the server does."""
    keys = ("DATABASE_URL", "INDEX_ROOT", "LOG_LEVEL", "DJANGO_SETTINGS_MODULE", "DEBUG", "SECRET_KEY")
    os.environ.update({k: env[k] for k in keys})
    for name in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):
        os.environ.pop(name, None)
    import django

    django.setup()


def serve_and_play(players: list[dict], env: dict, args) -> tuple:
    """Start gunicorn, run the participants against it, stop it: (stats, clients, elapsed, times_path)."""
    port = free_port()
    log_path = Path(tempfile.gettempdir()) / "sessionlab-load-gunicorn.log"
    times_path = Path(tempfile.gettempdir()) / "sessionlab-load-times.log" if args.server_times else None
    if times_path is not None:
        times_path.unlink(missing_ok=True)
    static_collect(env)
    server = gunicorn_start(env, port, args.workers, args.threads, log_path, args.worker_class, times_path)
    try:
        wait_listening(port, server)
        threads = f" x {args.threads} threads" if args.worker_class == "gthread" else ""
        print(
            f"gunicorn on 127.0.0.1:{port}: {args.workers} {args.worker_class} workers{threads}, "
            f"DB_CONN_MAX_AGE={args.conn_max_age}; {args.participants} participants for {args.duration:g} s, "
            f"think x{args.think}, batches <= {args.batch}, {args.resend:.0%} of batches re-sent"
        )
        stats, clients, elapsed = asyncio.run(play(players, port, args, {"gunicorn": server.pid}))
    finally:
        gunicorn_stop(server)
    return stats, clients, elapsed, times_path


def main(argv=None) -> int:
    args = arguments(argv)
    print(
        f"machine speed: a reference pure-Python loop takes {reference_loop_ms():.0f} ms (the figures below "
        "scale with it; it varied by a fifth within an hour on the VM of docs/performance-load.md)"
    )
    server_url = os.environ.get("LOAD_PG_URL", "postgres://postgres@127.0.0.1:5432").rstrip("/")
    if urlsplit(server_url).hostname not in ("127.0.0.1", "localhost"):
        raise SystemExit("LOAD_PG_URL must point at 127.0.0.1 (the benchmark stays on loopback)")
    database_url = database_recreate(server_url, args.database)
    index_root = tempfile.mkdtemp(prefix="sessionlab-load-indexes-")
    env = server_env(database_url, index_root, args.conn_max_age)
    django_setup(env)
    started = time.monotonic()
    players = study_build(args.participants, args.documents)
    print(
        f"setup: database {args.database}, {args.documents} documents indexed, {len(players)} participants "
        f"in their first search ({time.monotonic() - started:.1f} s)"
    )
    node_times = None
    if args.nodes > 1:
        stats, clients, elapsed, node_times = serve_nodes_and_play(players, env, args)
        times_path = None
    else:
        stats, clients, elapsed, times_path = serve_and_play(players, env, args)

    from django.db import connection

    connection.close()
    counts = events_count(clients)
    report_print(args, stats, counts, elapsed, times_path)
    if node_times is not None:
        nodes_print(stats, elapsed, node_times)
    if not args.keep:
        database_drop(server_url, args.database)
    return 1 if counts["lost"] or counts["duplicated"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
