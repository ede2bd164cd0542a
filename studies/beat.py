"""One turn per interval for each periodic task, however many beats send it (docs/deploying.md, "One beat in
a cluster").

A second `celery beat` (one per node, or `worker -B` on two hosts) sends every scheduled task again. The beat
schedule (CELERY_BEAT_SCHEDULE) passes `once_per_seconds=<interval>` to its tasks, and such a task first takes
its turn here, in the database every node shares (studies.models.BeatTurn, one row per task): a conditional
UPDATE moves the row's time to now only if the last turn is older than most of the interval, and the very
first send INSERTs the row. Of two sends at once exactly one changes a row: PostgreSQL makes the second
UPDATE wait for the first and then re-reads the row, which no longer matches; SQLite runs one writer at a
time; two first INSERTs meet the unique task name. The turn lasts 80% of the interval, not all of it, so a
single beat whose sends drift a little early is never skipped, while two beats (at any phase offset) still
run the task at most once per 0.8 interval. Times are the database's clock, not each node's.

No cache is involved, so two beats dedupe whatever CACHE_URL is. A database error is raised: the task
itself needs the database, and the next send tries again. Direct calls (manage.py sweep_overdue, a test)
pass no interval and always run.
"""

from __future__ import annotations

from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models.functions import Now

from studies.models import BeatTurn

SHARE_OF_INTERVAL = 0.8


def beat_turn(task_name: str, interval_seconds: int) -> bool:
    """True when this send of `task_name` should run: no other send took the turn within 80% of the
    interval. Call it outside a transaction (a task does), so that the turn is visible to other sends at
    once."""
    hold = timedelta(seconds=interval_seconds * SHARE_OF_INTERVAL)
    turns = BeatTurn.objects.filter(task=task_name)
    if turns.filter(taken_at__lte=Now() - hold).update(taken_at=Now()):
        return True
    if turns.exists():  # taken within the interval: the usual duplicate, answered without an error
        return False
    try:
        with transaction.atomic():
            BeatTurn.objects.create(task=task_name, taken_at=Now())
    except IntegrityError:  # another send inserted the first row a moment ago
        return False
    return True
