"""Two beats (one per node) send every scheduled task twice; the beat's sends carry their interval and the
second within it does nothing (studies/beat.py), while direct calls (manage.py, cron) always run. The turn
is a row in the database every node shares, so no shared cache is needed, and of two sends at once exactly
one wins, on SQLite and on PostgreSQL (CI's second pass)."""

import json
import os
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.db import connection, connections
from django.utils import timezone

from scoring import services as scoring_services
from scoring.tasks import stale_runs_requeue_task
from studies import beat
from studies.library.tasks import stale_uploads_fail_task
from studies.models import BeatTurn
from studies.participation.recruitment import sweep
from studies.tasks import overdue_sweep_task

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def requeue_calls(monkeypatch):
    calls = []
    monkeypatch.setattr(
        scoring_services, "stale_runs_requeue", lambda **kwargs: calls.append(kwargs) or [len(calls)]
    )
    return calls


def _turn_taken_ago(task: str, seconds: float) -> None:
    BeatTurn.objects.filter(task=task).update(taken_at=timezone.now() - timedelta(seconds=seconds))


def test_the_beat_schedule_passes_each_task_its_interval():
    schedule = settings.CELERY_BEAT_SCHEDULE
    assert schedule["requeue-stale-runs"]["kwargs"] == {
        "once_per_seconds": settings.REQUEUE_STALE_RUNS_SECONDS
    }
    assert schedule["sweep-overdue-participants"]["kwargs"] == {
        "once_per_seconds": settings.OVERDUE_SWEEP_SECONDS
    }
    assert schedule["fail-stale-uploads"]["kwargs"] == {
        "once_per_seconds": settings.STALE_UPLOADS_SWEEP_SECONDS
    }


def test_the_stale_runs_sweep_sent_twice_in_one_interval_runs_once(requeue_calls):
    assert stale_runs_requeue_task.delay(once_per_seconds=300).get() == [1]
    assert stale_runs_requeue_task.delay(once_per_seconds=300).get() == []
    assert len(requeue_calls) == 1


def test_the_turn_is_kept_in_the_database_not_the_cache(requeue_calls):
    stale_runs_requeue_task.delay(once_per_seconds=300).get()
    cache.clear()  # a per-process cache: another worker's is empty
    assert stale_runs_requeue_task.delay(once_per_seconds=300).get() == []
    assert BeatTurn.objects.filter(task=stale_runs_requeue_task.name).count() == 1
    assert len(requeue_calls) == 1


def test_a_direct_call_always_runs(requeue_calls):
    stale_runs_requeue_task.delay(once_per_seconds=300).get()
    stale_runs_requeue_task.delay().get()
    stale_runs_requeue_task()
    assert len(requeue_calls) == 3


def test_the_overdue_sweep_sent_twice_in_one_interval_runs_once(monkeypatch):
    heartbeats = []
    monkeypatch.setattr(sweep, "scheduler_heartbeat", lambda: heartbeats.append(1))
    first = overdue_sweep_task.delay(once_per_seconds=60).get()
    second = overdue_sweep_task.delay(once_per_seconds=60).get()
    assert "skipped" not in first
    assert second["skipped"] == 1
    assert len(heartbeats) == 1


def test_the_stale_uploads_sweep_sent_twice_in_one_interval_runs_once(monkeypatch):
    from studies.library import sweep

    calls = []
    monkeypatch.setattr(sweep, "uploads_stale_fail", lambda **kwargs: calls.append(kwargs) or [7])
    assert stale_uploads_fail_task.delay(once_per_seconds=300).get() == [7]
    assert stale_uploads_fail_task.delay(once_per_seconds=300).get() == []
    assert len(calls) == 1


def test_the_turn_comes_back_after_80_percent_of_the_interval():
    assert beat.beat_turn("some.task", 300)
    assert not beat.beat_turn("some.task", 300)
    assert beat.beat_turn("other.task", 300)  # one turn per task
    _turn_taken_ago("some.task", 200)  # within 240 s: still this turn
    assert not beat.beat_turn("some.task", 300)
    _turn_taken_ago("some.task", 241)
    assert beat.beat_turn("some.task", 300)
    assert not beat.beat_turn("some.task", 300)


def _race(task: str, sends: int) -> list[bool]:
    """`sends` threads, each on its own database connection, take the turn of `task` at the same moment."""
    barrier, won, errors = threading.Barrier(sends), [], []

    def send():
        try:
            barrier.wait(timeout=10)
            won.append(beat.beat_turn(task, 300))
        except Exception as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=send) for _ in range(sends)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    return sorted(won)


# The test database on SQLite is in memory with a shared cache, whose table locks fail at once instead of
# waiting ("database table is locked"): the race on SQLite runs in a subprocess, on a database file set up
# as production's (WAL, BEGIN IMMEDIATE, a 20 s busy timeout), with only the turns' table created.
SQLITE_RACE = """
import json, sys, threading
from datetime import timedelta
import django
django.setup()
from django.db import connection, connections
from django.utils import timezone
from studies.models import BeatTurn
from tests.faults.test_a_second_beat_sends_but_the_work_runs_once import _race
with connection.schema_editor() as editor:
    editor.create_model(BeatTurn)
results = []
for attempt in range(5):
    results.append(_race(f"first.{attempt}", 2))
    results.append(_race(f"first-of-four.{attempt}", 4))
    BeatTurn.objects.filter(task=f"first-of-four.{attempt}").update(
        taken_at=timezone.now() - timedelta(seconds=241)
    )
    results.append(_race(f"first-of-four.{attempt}", 4))
print(json.dumps(results))
"""


def test_on_a_sqlite_file_sends_at_once_take_one_turn(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL" and not k.startswith("PYTEST")}
    env.update(
        DEBUG="1",
        SQLITE_PATH=str(tmp_path / "turns.sqlite3"),
        DJANGO_SETTINGS_MODULE="sessionlab.settings",
        PYTHONPATH=str(ROOT),
    )
    result = subprocess.run(
        [sys.executable, "-c", SQLITE_RACE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    results = json.loads(result.stdout.strip().splitlines()[-1])
    assert results == [[False, True], [False, False, False, True], [False, False, False, True]] * 5


ON_POSTGRESQL = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="connections racing in one test database: PostgreSQL"
)


@ON_POSTGRESQL
@pytest.mark.django_db(transaction=True)
def test_two_sends_at_once_take_one_turn_for_the_first_time():
    for attempt in range(5):
        assert _race(f"first.task.{attempt}", 2) == [False, True]


@ON_POSTGRESQL
@pytest.mark.django_db(transaction=True)
def test_two_sends_at_once_take_one_turn_once_the_interval_has_passed():
    beat.beat_turn("due.task", 300)
    for _ in range(5):
        _turn_taken_ago("due.task", 241)
        assert _race("due.task", 2) == [False, True]


@ON_POSTGRESQL
@pytest.mark.django_db(transaction=True)
def test_four_sends_at_once_take_one_turn():
    assert _race("many.task", 4) == [False, False, False, True]
    _turn_taken_ago("many.task", 241)
    assert _race("many.task", 4) == [False, False, False, True]
