"""The load benchmark's figures (bench/load.py): latency percentiles, and every event in the database
counted against what the participants sent."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from load_participant import Participant


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(q / 100 * (len(ordered) - 1)))))
    return ordered[index]


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


def report_print(args, stats, counts: dict, elapsed: float, times_path: Path | None) -> None:
    """The run's figures: throughput, CPU, latency per endpoint, errors, and the database's count."""
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
        "events acknowledged by type: "
        + ", ".join(f"{kind} {n}" for kind, n in stats.acked_by_type.most_common())
    )
    cpu_print(stats, elapsed, requests)
    latency_print(stats, times_path)
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
        f"unacknowledged at the end: {counts['unacked_stored']} stored, "
        f"{counts['unacked_not_stored']} not stored"
    )


def cpu_print(stats, elapsed: float, requests: int) -> None:
    print(
        f"gunicorn CPU: {stats.server_cpu:.1f} s over {elapsed:.1f} s = {stats.server_cpu / elapsed:.2f} "
        f"cores; {stats.server_cpu / max(requests, 1) * 1000:.1f} ms per request, "
        f"{stats.server_cpu / max(stats.events_acked, 1) * 1000:.1f} ms per event; machine: "
        f"{os.cpu_count()} cores, load average at the end {os.getloadavg()[0]:.1f} "
        "(other processes share them)"
    )
    print(
        f"PostgreSQL CPU: {stats.postgres_cpu / elapsed:.2f} cores, "
        f"{stats.postgres_cpu / max(requests, 1) * 1000:.1f} ms per request; "
        f"this load generator: {stats.own_cpu / elapsed:.2f} cores, its event loop late by "
        f"{percentile(stats.loop_lag, 50) * 1000:.1f} / {percentile(stats.loop_lag, 99) * 1000:.1f} ms "
        "(p50 / p99)"
    )


def latency_print(stats, times_path: Path | None) -> None:
    """p50/p95/p99/max per endpoint, over all requests, and (--server-times) gunicorn's own time."""
    print(f"{'endpoint':40} {'n':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for endpoint, values in sorted(stats.latency.items()):
        print(
            f"{endpoint:40} {len(values):7d} {percentile(values, 50) * 1000:8.1f} "
            f"{percentile(values, 95) * 1000:8.1f} {percentile(values, 99) * 1000:8.1f} "
            f"{max(values) * 1000:8.1f}"
        )
    everything = [v for values in stats.latency.values() for v in values]
    print(
        f"{'all requests':40} {len(everything):7d} {percentile(everything, 50) * 1000:8.1f} "
        f"{percentile(everything, 95) * 1000:8.1f} {percentile(everything, 99) * 1000:8.1f}"
    )
    if times_path is not None:
        # Every request, the warm-up's and the drain's too: the time gunicorn spent on it, from its first
        # byte read to its last written, without the wait for a free worker that the figures above include.
        times = [int(line) / 1e6 for line in times_path.read_text().split()]
        print(
            f"{'  server time (gunicorn), every request':40} {len(times):7d} "
            f"{percentile(times, 50) * 1000:8.1f} {percentile(times, 95) * 1000:8.1f} "
            f"{percentile(times, 99) * 1000:8.1f} {max(times) * 1000:8.1f}"
        )
