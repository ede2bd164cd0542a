"""The load benchmark, paired: today's server, an older commit's and a floor, in alternating rounds.

    .venv/bin/python bench/load_paired.py [--participants 200] [--duration 60] [--rounds 3] [--workers 3]
        [--think 0.5] [--baseline e99bc41] [--no-baseline]

Three servers, each with a database of its own on the PostgreSQL server of $LOAD_PG_URL (default
postgres://postgres@127.0.0.1:5432), all started before the first round and idle outside their rounds:

- today: this checkout's SessionLab (gunicorn, as bench/load.py serves it);
- baseline: the SessionLab of `--baseline` (a commit), from a git worktree of it under the temporary folder,
  its database migrated and its study built by that code (bench/load_build.py);
- floor: bench/load_floor.py, a bare WSGI app that writes the same rows with the same statements in the same
  transaction and nothing else, on a copy of today's database (CREATE DATABASE ... TEMPLATE).

Each round runs the same participants (bench/load_participant.py: the same event mix, re-sends and pauses) for
--duration seconds against one server, in the order today, baseline, floor, shifted by one each round so that
none is always first after another. The participants never reload their page here (--reload-every 0), so
every measured request is an events POST. For each server it prints, summed over its rounds: CPU per request
and per event of its gunicorn process group (the workers and the master, from /proc), PostgreSQL's CPU per
event, p50/p99 latency, events/s; then the ratios today/floor and today/baseline, over all rounds and round
by round (a machine shared with other work drifts within minutes: a round's ratio pairs neighbours in time).
At the end every event is counted in each database against what was sent: lost, duplicated.
Everything stays on 127.0.0.1; every round, drain and shutdown is bounded in time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
if str(HERE) not in sys.path:
    sys.path.append(str(HERE))

from load_participant import play  # noqa: E402
from load_report import percentile  # noqa: E402
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

BASELINE = "e99bc41"  # main's last commit of 2026-11-25, the code of the runs that met the load target
SERVERS = ("today", "baseline", "floor")


def arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--duration", type=float, default=60, help="seconds of load per round (at most 600)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per server (at most 10)")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers of each server")
    parser.add_argument("--think", type=float, default=0.5, help="pause scale (bench/load.py)")
    parser.add_argument("--baseline", default=BASELINE, help="the older commit to serve (git rev)")
    parser.add_argument("--no-baseline", dest="with_baseline", action="store_false")
    parser.add_argument("--no-exposure", dest="exposure", action="store_false", help="as bench/load.py")
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--resend", type=float, default=0.05)
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--drain", type=float, default=8)
    parser.add_argument("--request-timeout", type=float, default=10)
    parser.add_argument("--report-every", type=float, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database", default="sessionlab_paired", help="prefix of the three databases")
    args = parser.parse_args(argv)
    args.duration = min(args.duration, 600)
    args.rounds = max(1, min(args.rounds, 10))
    args.reload_every = 0
    return args


def git(*command: str) -> str:
    return subprocess.run(
        ["git", *command], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()


def baseline_worktree(commit: str) -> Path:
    """A worktree of `commit` under the temporary folder (kept between runs, detached: no branch)."""
    full = git("rev-parse", "--verify", f"{commit}^{{commit}}")
    path = Path(tempfile.gettempdir()) / f"sessionlab-baseline-{full[:10]}"
    if not (path / "manage.py").exists():
        git("worktree", "add", "--detach", "--force", str(path), full)
    return path


def baseline_build(path: Path, env: dict, args) -> list[dict]:
    out = Path(tempfile.mkstemp(prefix="sessionlab-baseline-players-", suffix=".json")[1])
    command = [sys.executable, str(HERE / "load_build.py"), "--root", str(path), "--out", str(out)]
    command += ["--participants", str(args.participants), "--documents", str(args.documents)]
    subprocess.run(command, cwd=path, env=env, check=True, timeout=900)
    players = json.loads(out.read_text())
    out.unlink()
    return players


def django_setup(env: dict) -> None:
    keys = ("DATABASE_URL", "INDEX_ROOT", "LOG_LEVEL", "DJANGO_SETTINGS_MODULE", "DEBUG", "SECRET_KEY")
    os.environ.update({k: env[k] for k in keys})
    for name in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):
        os.environ.pop(name, None)
    import django

    django.setup()


def database_copy(server_url: str, source: str, name: str) -> str:
    import psycopg

    with psycopg.connect(f"{server_url}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{source}"')
    return f"{server_url}/{name}"


def events_counted(database_url: str, clients: list) -> dict:
    """Every event of the participants in this database against what they sent (load_report.events_count)."""
    import psycopg

    with psycopg.connect(database_url) as db:
        rows = db.execute(
            "SELECT participant_id, client_event_id, count(*) FROM studies_event "
            "WHERE client_event_id LIKE 'L-%%' GROUP BY participant_id, client_event_id"
        ).fetchall()
    stored = {(p, c): n for p, c, n in rows}
    acked = lost = 0
    for client in clients:
        for cid in client.acked:
            acked += 1
            lost += (client.player["pk"], cid) not in stored
    return {"acked": acked, "lost": lost, "duplicated": sum(n - 1 for n in stored.values())}


class Server:
    def __init__(self, name: str, env: dict, players: list[dict], cwd: Path, app: str):
        self.name, self.env, self.players, self.cwd, self.app = name, env, players, cwd, app
        self.port = free_port()
        self.process = None
        self.rounds: list[dict] = []
        self.clients: list = []

    def start(self, workers: int) -> None:
        log = Path(tempfile.gettempdir()) / f"sessionlab-paired-{self.name}.log"
        self.process = gunicorn_start(self.env, self.port, workers, 1, log, cwd=self.cwd, app=self.app)

    def round_run(self, args) -> dict:
        stats, clients, elapsed = asyncio.run(
            play(self.players, self.port, args, {"gunicorn": self.process.pid})
        )
        self.clients += clients
        latencies = [v for values in stats.latency.values() for v in values]
        figures = {
            "elapsed": elapsed,
            "cpu": stats.server_cpu,
            "postgres": stats.postgres_cpu,
            "requests": len(latencies),
            "events": stats.events_acked,
            "refused": stats.events_refused,
            "errors": sum(stats.errors.values()),
            "latencies": latencies,
            "lag": percentile(stats.loop_lag, 99),
        }
        self.rounds.append(figures)
        return figures


def summary(rounds: list[dict]) -> dict:
    total = {k: sum(r[k] for r in rounds) for k in ("elapsed", "cpu", "postgres", "requests", "events")}
    total.update({k: sum(r[k] for r in rounds) for k in ("refused", "errors")})
    latencies = [v for r in rounds for v in r["latencies"]]
    total["p50"], total["p99"] = percentile(latencies, 50), percentile(latencies, 99)
    return total


def per_event(figures: dict) -> float:
    return figures["cpu"] / max(figures["events"], 1) * 1000


def line(name: str, f: dict) -> str:
    return (
        f"{name:9} {f['events'] / f['elapsed']:8.0f} {f['requests'] / f['elapsed']:7.0f} "
        f"{f['cpu'] / max(f['requests'], 1) * 1000:9.2f} {per_event(f):9.3f} "
        f"{f['postgres'] / max(f['events'], 1) * 1000:9.3f} {f['p50'] * 1000:7.1f} {f['p99'] * 1000:7.1f} "
        f"{f['refused']:7d} {f['errors']:6d}"
    )


def report(servers: list[Server], args, loop_ms: float) -> None:
    print(
        f"\n=== paired load: {args.participants} participants, think x{args.think}, {args.rounds} rounds of "
        f"{args.duration:g} s per server, {args.workers} workers; reference loop {loop_ms:.0f} ms; load "
        f"average at the end {os.getloadavg()[0]:.1f} ==="
    )
    print(
        f"{'server':9} {'events/s':>8} {'req/s':>7} {'ms CPU/req':>9} {'ms CPU/ev':>9} {'pg ms/ev':>9} "
        f"{'p50 ms':>7} {'p99 ms':>7} {'refused':>7} {'errors':>6}"
    )
    totals = {}
    for server in servers:
        totals[server.name] = summary(server.rounds)
        print(line(server.name, totals[server.name]))
    # Each server's p99 round by round: a round's figure pairs with its neighbours in time, as the ratios do.
    for server in servers:
        by_round = ", ".join(f"{percentile(r['latencies'], 99) * 1000:.1f}" for r in server.rounds)
        print(f"p99 ms by round, {server.name}: {by_round}")
    today = totals["today"]
    for other in ("floor", "baseline"):
        if other not in totals:
            continue
        them = totals[other]
        rounds = [
            per_event(mine) / per_event(theirs)
            for mine, theirs in zip(
                servers[0].rounds, next(s for s in servers if s.name == other).rounds, strict=True
            )
        ]
        print(
            f"today/{other}: CPU per event {per_event(today) / per_event(them):.2f}x "
            f"(rounds: {', '.join(f'{r:.2f}' for r in rounds)}), CPU per request "
            f"{today['cpu'] / max(today['requests'], 1) / (them['cpu'] / max(them['requests'], 1)):.2f}x, "
            f"p99 {today['p99'] / them['p99']:.2f}x, events/s {today['events'] / them['events']:.2f}x"
        )


def main(argv=None) -> int:
    args = arguments(argv)
    loop_ms = reference_loop_ms()
    print(
        f"machine speed: a reference pure-Python loop takes {loop_ms:.0f} ms; load average {os.getloadavg()}"
    )
    server_url = os.environ.get("LOAD_PG_URL", "postgres://postgres@127.0.0.1:5432").rstrip("/")
    if urlsplit(server_url).hostname not in ("127.0.0.1", "localhost"):
        raise SystemExit("LOAD_PG_URL must point at 127.0.0.1 (the benchmark stays on loopback)")
    names = {name: f"{args.database}_{name}" for name in SERVERS}
    started = time.monotonic()
    index_root = tempfile.mkdtemp(prefix="sessionlab-paired-indexes-")
    today_env = server_env(database_recreate(server_url, names["today"]), index_root, 60)
    django_setup(today_env)
    players = study_build(args.participants, args.documents)
    from django.db import connections

    connections.close_all()  # the floor's copy needs the source database without connections
    floor_env = {**today_env, "DATABASE_URL": database_copy(server_url, names["today"], names["floor"])}
    static_collect(today_env)
    servers = [Server("today", today_env, players, ROOT, "sessionlab.wsgi:application")]
    if args.with_baseline:
        path = baseline_worktree(args.baseline)
        baseline_root = tempfile.mkdtemp(prefix="sessionlab-paired-baseline-indexes-")
        env = server_env(database_recreate(server_url, names["baseline"]), baseline_root, 60)
        baseline_players = baseline_build(path, env, args)
        static_collect(env, cwd=path)
        servers.append(Server("baseline", env, baseline_players, path, "sessionlab.wsgi:application"))
        print(f"baseline: {git('log', '-1', '--format=%h %ad %s', '--date=short', args.baseline)} at {path}")
    servers.append(
        Server("floor", floor_env, [dict(p) for p in players], ROOT, "bench.load_floor:application")
    )
    print(
        f"setup: three databases, {args.participants} participants each ({time.monotonic() - started:.0f} s)"
    )
    try:
        for server in servers:
            server.start(args.workers)
        for server in servers:
            wait_listening(server.port, server.process)
        for n in range(args.rounds):
            for server in servers[n % len(servers) :] + servers[: n % len(servers)]:
                print(f"\n--- round {n + 1}: {server.name} (127.0.0.1:{server.port})", flush=True)
                figures = server.round_run(args)
                print(line(server.name, {**figures, **summary([figures])}), flush=True)
    finally:
        for server in servers:
            if server.process is not None:
                gunicorn_stop(server.process)
    report(servers, args, loop_ms)
    bad = 0
    for server in servers:
        counts = events_counted(server.env["DATABASE_URL"], server.clients)
        bad += counts["lost"] + counts["duplicated"]
        print(
            f"{server.name}: acknowledged {counts['acked']}, lost {counts['lost']}, "
            f"duplicated {counts['duplicated']}"
        )
    for name in names.values():
        database_drop(server_url, name)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
