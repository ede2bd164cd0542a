"""One turn per interval for each periodic task, however many beats send it (docs/deploying.md, "One beat in
a cluster").

A second `celery beat` (one per node, or `worker -B` on two hosts) sends every scheduled task again. The beat
schedule (CELERY_BEAT_SCHEDULE) passes `once_per_seconds=<interval>` to its tasks, and such a task first takes
its turn here: a cache.add() of a key named after the task, kept for most of the interval. The first send
within that time runs; a duplicate finds the key and does nothing. The key lasts 80% of the interval, not all
of it, so a single beat whose sends drift a little early is never skipped, while two beats (at any phase
offset) still run the task at most once per 0.8 interval.

The cache must be one every worker shares (CACHE_URL, which `check --deploy` asks for); with per-process
memory each worker keeps its own turns and duplicates run, as before. When the cache is unreachable the task
runs: the periodic tasks are idempotent, so a double run costs time, a skipped one would cost a sweep.
Direct calls (manage.py sweep_overdue, a test) pass no interval and always run.
"""

from __future__ import annotations

import logging

from django.core.cache import cache

logger = logging.getLogger(__name__)

PREFIX = "beat-turn"
SHARE_OF_INTERVAL = 0.8


def beat_turn(task_name: str, interval_seconds: int) -> bool:
    """True when this send of `task_name` should run: no other send took the turn within the interval."""
    timeout = max(1, int(interval_seconds * SHARE_OF_INTERVAL))
    try:
        return bool(cache.add(f"{PREFIX}:{task_name}", 1, timeout))
    except Exception as error:  # noqa: BLE001 - the cache down must not stop the sweeps
        logger.warning("beat turn of %s not taken, the cache failed (%r): running anyway", task_name, error)
        return True
