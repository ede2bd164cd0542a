"""Scoring runs and power plans are chords: every documented broker gets a result backend that can join them
across workers, and a pair that cannot is refused at start with what to set (sessionlab/celery_backend.py)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from sessionlab.celery_backend import result_backend_for

ROOT = Path(__file__).resolve().parents[2]


def test_a_redis_broker_shares_its_redis_for_results():
    assert result_backend_for("redis://cache:6379/0", None) == "redis://cache:6379/0"
    assert result_backend_for("rediss://cache:6380/0", "") == "rediss://cache:6380/0"


def test_a_named_backend_is_kept():
    assert result_backend_for("amqp://rabbit//", "redis://cache:6379/1") == "redis://cache:6379/1"
    assert result_backend_for("redis://cache:6379/0", "redis://other:6379/2") == "redis://other:6379/2"


def test_no_broker_needs_no_backend_and_the_memory_broker_gets_the_in_process_cache():
    assert result_backend_for(None, None) is None
    assert result_backend_for("memory://", None) == "cache+memory://"


def test_rabbitmq_without_a_backend_is_refused_with_what_to_set():
    with pytest.raises(ImproperlyConfigured, match=r"CELERY_RESULT_BACKEND=redis://"):
        result_backend_for("amqp://guest@rabbit:5672//", None)


@pytest.mark.parametrize("backend", ["amqp://guest@rabbit//", "rpc://", "cache+memory://"])
def test_a_backend_celery_cannot_use_for_chords_is_refused(backend):
    with pytest.raises(ImproperlyConfigured, match=r"set CELERY_RESULT_BACKEND=redis://"):
        result_backend_for("amqp://guest@rabbit:5672//", backend)


def test_the_settings_refuse_rabbitmq_without_a_backend_at_start():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "CELERY_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="sessionlab.settings",
        PYTHONPATH=str(ROOT),
        DEBUG="1",
        CELERY_BROKER_URL="amqp://guest@rabbit:5672//",
    )
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "CELERY_RESULT_BACKEND is unset" in result.stderr
