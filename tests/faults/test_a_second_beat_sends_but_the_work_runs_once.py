"""Two beats (one per node) send every scheduled task twice; the beat's sends carry their interval and the
second within it does nothing (sessionlab/beat.py), while direct calls (manage.py, cron) always run."""

import pytest
from django.conf import settings
from django.core.cache import cache

from scoring import services as scoring_services
from scoring.tasks import stale_runs_requeue_task
from sessionlab import beat
from studies.participation import recruitment
from studies.tasks import overdue_sweep_task


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def requeue_calls(monkeypatch):
    calls = []
    monkeypatch.setattr(
        scoring_services, "stale_runs_requeue", lambda **kwargs: calls.append(kwargs) or [len(calls)]
    )
    return calls


def test_the_beat_schedule_passes_each_task_its_interval():
    schedule = settings.CELERY_BEAT_SCHEDULE
    assert schedule["requeue-stale-runs"]["kwargs"] == {
        "once_per_seconds": settings.REQUEUE_STALE_RUNS_SECONDS
    }
    assert schedule["sweep-overdue-participants"]["kwargs"] == {
        "once_per_seconds": settings.OVERDUE_SWEEP_SECONDS
    }


def test_the_stale_runs_sweep_sent_twice_in_one_interval_runs_once(requeue_calls):
    assert stale_runs_requeue_task.delay(once_per_seconds=300).get() == [1]
    assert stale_runs_requeue_task.delay(once_per_seconds=300).get() == []
    assert len(requeue_calls) == 1


def test_a_direct_call_always_runs(requeue_calls):
    stale_runs_requeue_task.delay(once_per_seconds=300).get()
    stale_runs_requeue_task.delay().get()
    stale_runs_requeue_task()
    assert len(requeue_calls) == 3


@pytest.mark.django_db
def test_the_overdue_sweep_sent_twice_in_one_interval_runs_once(monkeypatch):
    heartbeats = []
    monkeypatch.setattr(recruitment, "scheduler_heartbeat", lambda: heartbeats.append(1))
    first = overdue_sweep_task.delay(once_per_seconds=60).get()
    second = overdue_sweep_task.delay(once_per_seconds=60).get()
    assert "skipped" not in first
    assert second["skipped"] == 1
    assert len(heartbeats) == 1


def test_the_turn_comes_back_when_the_interval_has_passed(monkeypatch):
    assert beat.beat_turn("some.task", 300)
    assert not beat.beat_turn("some.task", 300)
    assert beat.beat_turn("other.task", 300)  # one turn per task
    cache.delete(f"{beat.PREFIX}:some.task")  # what the key's expiry (240 s) does
    assert beat.beat_turn("some.task", 300)


def test_an_unreachable_cache_lets_the_task_run(monkeypatch):
    def broken_add(*args, **kwargs):
        raise ConnectionError("redis down")

    monkeypatch.setattr(beat.cache, "add", broken_add)
    assert beat.beat_turn("some.task", 300)
    assert beat.beat_turn("some.task", 300)
