"""The load benchmark's `--nodes N` (bench/load.py): N gunicorn nodes, each started from a copy of the
checkout of its own (tests/cluster/local_cluster.py: no shared disk), behind bench/load_balancer.py, and the
figures per node.

Each node gets its own INDEX_ROOT holding a copy of the indexes the study was built with, as a node that
fetched the published snapshot would (docs/deploying.md, "Search indexes"); static files are collected in
each copy, as a deploy does. Every node keeps an access log of its own time per request."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from load_participant import play
from load_report import percentile
from load_server import free_port, gunicorn_start, gunicorn_stop, wait_listening

HERE = Path(__file__).resolve().parent


def serve_nodes_and_play(players: list[dict], env: dict, args) -> tuple:
    """Start the nodes and the balancer, run the participants against the balancer, stop everything:
    (stats, clients, elapsed, [each node's times file])."""
    from tests.cluster.local_cluster import checkout_copy, manage

    base = Path(tempfile.mkdtemp(prefix="sessionlab-load-nodes-"))
    nodes, ports, times = [], [], []
    balancer = None
    try:
        for n in range(1, args.nodes + 1):
            folder = checkout_copy(base / f"node{n}")
            node_env = dict(env, INDEX_ROOT=str(folder / "indexes"))
            shutil.copytree(env["INDEX_ROOT"], folder / "indexes")
            manage(folder, node_env, "collectstatic", "--noinput", "--verbosity", "0")
            port, log = free_port(), folder / "gunicorn.log"
            times.append(folder / "times.log")
            nodes.append(
                gunicorn_start(
                    node_env, port, args.workers, args.threads, log, args.worker_class, times[-1], cwd=folder
                )
            )
            ports.append(port)
        for port, node in zip(ports, nodes, strict=True):
            wait_listening(port, node)
        listen = free_port()
        balancer = subprocess.Popen(
            [
                sys.executable,
                str(HERE / "load_balancer.py"),
                "--listen",
                str(listen),
                "--to",
                ",".join(map(str, ports)),
            ],
            start_new_session=True,
        )
        wait_listening(listen, balancer)
        print(
            f"{args.nodes} nodes (gunicorn, {args.workers} {args.worker_class} workers each, copies under "
            f"{base}) "
            f"behind a round-robin balancer on 127.0.0.1:{listen}; {args.participants} participants for "
            f"{args.duration:g} s, think x{args.think}"
        )
        pgids = {f"node{n}": node.pid for n, node in enumerate(nodes, start=1)} | {"balancer": balancer.pid}
        stats, clients, elapsed = asyncio.run(play(players, listen, args, pgids))
    finally:
        for process in [*nodes, *([balancer] if balancer else [])]:
            gunicorn_stop(process)
    return stats, clients, elapsed, times


def nodes_print(stats, elapsed: float, times: list[Path]) -> None:
    """Per node: the requests it served (warm-up and drain included), their share, gunicorn's own time per
    request, and the CPU it used over the measured run; then the balancer's CPU."""
    counts = [[int(line) / 1e6 for line in path.read_text().split()] for path in times]
    total = sum(len(c) for c in counts) or 1
    print(f"{'node':10} {'requests':>9} {'share':>6} {'p50 ms':>8} {'p99 ms':>8} {'CPU s':>7} {'cores':>6}")
    for n, values in enumerate(counts, start=1):
        cpu = stats.cpu_by_process[f"node{n}"]
        print(
            f"{'node' + str(n):10} {len(values):9d} {len(values) / total:6.1%} "
            f"{percentile(values, 50) * 1000:8.1f} {percentile(values, 99) * 1000:8.1f} "
            f"{cpu:7.1f} {cpu / elapsed:6.2f}"
        )
    cpu = stats.cpu_by_process["balancer"]
    print(f"{'balancer':10} {'':>9} {'':>6} {'':>8} {'':>8} {cpu:7.1f} {cpu / elapsed:6.2f}")
