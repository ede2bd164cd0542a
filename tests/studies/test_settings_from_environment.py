"""A malformed environment variable stops start-up with a message that names it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def start_django(**env):
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS"}
    }
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); print('started')"],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "sessionlab.settings", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"DEBUG": "maybe"}, "DEBUG='maybe' is not a boolean"),
        ({"DEBUG": "1", "DATABASE_URL": "mysql://x"}, "DATABASE_URL='mysql://x' must start with one of"),
        (
            {"DEBUG": "1", "CELERY_BROKER_URL": "localhost:6379"},
            "CELERY_BROKER_URL='localhost:6379' must start with one of",
        ),
        ({"DEBUG": "0"}, "SECRET_KEY must be set"),
        ({"DEBUG": "1", "EMAIL_BACKEND": "carrier-pigeon"}, "EMAIL_BACKEND='carrier-pigeon' is not one of"),
        ({"DEBUG": "1", "EMAIL_USE_TLS": "1", "EMAIL_USE_SSL": "1"}, "Set only one of EMAIL_USE_TLS"),
    ],
)
def test_a_malformed_variable_stops_start_up(env, expected):
    result = start_django(**env)
    assert result.returncode != 0
    assert expected in result.stderr


def test_the_embedded_defaults_start_in_development_with_debug_only():
    result = start_django(DEBUG="1")
    assert result.returncode == 0, result.stderr
    assert "started" in result.stdout


def test_debug_is_off_unless_set_so_nothing_set_asks_for_a_secret_key_or_debug():
    result = start_django()
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr and "DEBUG=1" in result.stderr
    production = start_django(SECRET_KEY="k" * 50, ALLOWED_HOSTS="sessionlab.example.org")
    assert production.returncode == 0, production.stderr


@pytest.mark.parametrize("hosts", ["sessionlab.example.org", "*", "127.0.0.1,10.0.0.5", ".example.org"])
def test_debug_with_hosts_beyond_this_machine_refuses_to_start(hosts):
    result = start_django(DEBUG="1", ALLOWED_HOSTS=hosts)
    assert result.returncode != 0
    assert "DEBUG=1 with ALLOWED_HOSTS" in result.stderr and "DEBUG=0" in result.stderr


@pytest.mark.parametrize("hosts", ["127.0.0.1,localhost,testserver", "::1,[::1],127.0.0.2", "app.localhost"])
def test_debug_with_loopback_hosts_starts(hosts):
    result = start_django(DEBUG="1", ALLOWED_HOSTS=hosts)
    assert result.returncode == 0, result.stderr
