"""Benchmark: a 10-point power curve with 500 replications each on the demo study, in-process and on one and
two Celery workers. It prints figures only.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sl_power .venv/bin/python bench/planning.py \
        [--effect pilot|specified|simulated] [--modes eager,1,2] [--replications 500] [--counts 10,20,...]

Needs the demo study in that database (`DATABASE_URL=... make demo-data`, DEMO_DATA for Cranfield). For the
worker modes it starts `celery -A sessionlab worker --concurrency N` itself, with CELERY_BROKER_URL and
CELERY_RESULT_BACKEND (a chord needs one) at Redis (default redis://127.0.0.1:6379/7), waits for it, queues
the plan, times it from its creation until it is done (polling the database), and stops the worker it started.
Each measurement uses a fresh seed, so no plan is served from the planner's cache.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
DEMO_SLUG = "demo-ecir-2008"
COUNTS = list(range(10, 101, 10))


def child(args) -> None:
    """One measurement in this process's environment (eager when no broker is set)."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sessionlab.settings")
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.db import transaction

    from scoring.models import PowerPlan
    from scoring.planning import charts, selectors, services
    from studies.models import Study

    study = Study.objects.get(slug=DEMO_SLUG)
    first, second = study.systems.order_by("id")[:2]
    options = {
        "effect": args.effect,
        "replications": args.replications,
        "counts": [int(n) for n in args.counts.split(",")],
        "seed": int(time.time() * 1000) % 2**31,
    }
    if args.effect == "specified":
        options.update(difference=0.015, spread=0.05)
    if args.effect == "simulated":
        options.update(simulated_participants=args.simulated)
    started = time.perf_counter()
    with transaction.atomic():
        plan, _ = services.power_plan_create(study=study, first_system=first, second_system=second, **options)
    while True:
        plan.refresh_from_db()
        if plan.is_finished:
            break
        time.sleep(0.2)
    seconds = time.perf_counter() - started
    curve = selectors.plan_curve(plan)
    print(
        json.dumps(
            {
                "seconds": seconds,
                "status": plan.status,
                "error": plan.error,
                "points": [[p.n, round(p.power, 3), round(p.low, 3), round(p.high, 3)] for p in curve.points],
                "notes": charts.plan_notes(plan, curve),
            }
        )
    )
    if plan.status != PowerPlan.Status.DONE:
        sys.exit(1)


def worker_start(env: dict, concurrency: int, log: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        [
            str(ROOT / ".venv" / "bin" / "celery"),
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
        ],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        if "ready." in log.read_text(errors="replace"):
            return process
        time.sleep(0.5)
    process.send_signal(signal.SIGTERM)
    raise SystemExit(f"the worker did not start in 60 s; see {log}")


def measure(mode: str, args) -> dict:
    env = dict(os.environ, DEBUG=os.environ.get("DEBUG", "1"), LOG_LEVEL="WARNING")
    command = [
        str(PYTHON),
        __file__,
        "--child",
        "--effect",
        args.effect,
        "--replications",
        str(args.replications),
        "--simulated",
        str(args.simulated),
        "--counts",
        args.counts,
    ]
    if mode == "eager":
        env.pop("CELERY_BROKER_URL", None)
        env.pop("CELERY_RESULT_BACKEND", None)
        result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    else:
        env["CELERY_BROKER_URL"] = env["CELERY_RESULT_BACKEND"] = args.broker
        log = Path(f"/tmp/bench-planning-worker-{mode}.log")
        worker = worker_start(env, int(mode), log)
        try:
            result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        finally:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=30)
    if result.returncode:
        raise SystemExit(f"{mode}: {result.stderr[-2000:]}{result.stdout[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--effect", choices=("pilot", "specified", "simulated"), default="pilot")
    parser.add_argument("--modes", default="eager,1,2", help="eager and/or worker counts, comma-separated")
    parser.add_argument("--replications", type=int, default=500)
    parser.add_argument(
        "--simulated",
        type=int,
        default=0,
        help="simulated participants (effect=simulated; 0: the planner's default, 16 blocks)",
    )
    parser.add_argument(
        "--counts", default=",".join(map(str, COUNTS)), help="participant counts, comma-separated (10..100)"
    )
    parser.add_argument("--broker", default=os.environ.get("BENCH_BROKER", "redis://127.0.0.1:6379/7"))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if not os.environ.get("DATABASE_URL") and args.modes != "eager":
        raise SystemExit(
            "set DATABASE_URL to the PostgreSQL database holding the demo study (workers share it)"
        )
    counts = [int(n) for n in args.counts.split(",")]
    print(
        f"power curve: {len(counts)} counts ({counts[0]}..{counts[-1]} participants) x {args.replications} "
        f"replications, effect {args.effect}, demo study {DEMO_SLUG}"
    )
    last = None
    for mode in args.modes.split(","):
        figures = measure(mode.strip(), args)
        label = (
            "in-process (eager)" if mode == "eager" else f"{mode} worker process{'es' if mode != '1' else ''}"
        )
        print(f"  {label:<22} {figures['seconds']:7.1f} s")
        last = figures
    if last:
        print("curve (participants, power, 95% Monte Carlo interval):")
        for n, power, low, high in last["points"]:
            print(f"  {n:4d}  {power:.3f}  [{low:.3f}, {high:.3f}]")
        for note in last["notes"]:
            print(f"  - {note}")


if __name__ == "__main__":
    main()
