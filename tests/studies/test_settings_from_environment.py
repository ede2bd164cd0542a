"""A malformed environment variable stops start-up with a message that names it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def start_django(**env):
    clean = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "DEBUG"}}
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); print('started')"],
        cwd=ROOT, env={**clean, "DJANGO_SETTINGS_MODULE": "sessionlab.settings", **env},
        capture_output=True, text=True, timeout=60,
    )


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"DEBUG": "maybe"}, "DEBUG='maybe' is not a boolean"),
        ({"DATABASE_URL": "mysql://x"}, "DATABASE_URL='mysql://x' must start with one of"),
        ({"CELERY_BROKER_URL": "localhost:6379"}, "CELERY_BROKER_URL='localhost:6379' must start with one of"),
        ({"DEBUG": "0"}, "SECRET_KEY must be set"),
    ],
)
def test_a_malformed_variable_stops_start_up(env, expected):
    result = start_django(**env)
    assert result.returncode != 0
    assert expected in result.stderr


def test_the_embedded_defaults_start_with_nothing_set():
    result = start_django()
    assert result.returncode == 0, result.stderr
    assert "started" in result.stdout
