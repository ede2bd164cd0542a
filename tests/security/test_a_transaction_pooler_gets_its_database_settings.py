"""Behind PgBouncer in transaction mode (docs/deploying.md, "Topology"): DB_DISABLE_SERVER_SIDE_CURSORS=1 sets
the database's DISABLE_SERVER_SIDE_CURSORS, DB_PREPARED_STATEMENTS=0 turns psycopg's prepared statements off;
unset, neither changes what a direct connection had, and a value that is not a boolean stops start-up naming
the variable. Read as each process reads them: settings loaded in a subprocess."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NAMES = ("DATABASE_URL", "DB_DISABLE_SERVER_SIDE_CURSORS", "DB_PREPARED_STATEMENTS", "DB_CONN_MAX_AGE")
POSTGRES = "postgres://sessionlab@pooler.lab.internal:6432/sessionlab"


def _load(**env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in NAMES and not k.startswith("PYTEST")}
    clean.update({"DJANGO_SETTINGS_MODULE": "sessionlab.settings", "PYTHONPATH": str(ROOT), "DEBUG": "1"})
    code = (
        "import json, django; from django.conf import settings; django.setup(); "
        "d = settings.DATABASES['default']; "
        "print(json.dumps({'cursors_off': d.get('DISABLE_SERVER_SIDE_CURSORS'), "
        "'prepare_threshold': d.get('OPTIONS', {}).get('prepare_threshold', 'absent'), "
        "'engine': d['ENGINE']}))"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def _database(**env) -> dict:
    result = _load(**env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_unset_a_postgresql_connection_keeps_server_side_cursors_and_prepares():
    assert _database(DATABASE_URL=POSTGRES) == {
        "cursors_off": False,
        "prepare_threshold": 5,
        "engine": "django.db.backends.postgresql",
    }


@pytest.mark.parametrize("raw", ["1", "true", "yes", "on"])
def test_the_variable_disables_server_side_cursors(raw):
    database = _database(DATABASE_URL=POSTGRES, DB_DISABLE_SERVER_SIDE_CURSORS=raw)
    assert database["cursors_off"] is True
    assert database["prepare_threshold"] == 5  # a separate choice: PgBouncer 1.21+ keeps them


def test_prepared_statements_can_be_turned_off():
    database = _database(
        DATABASE_URL=POSTGRES, DB_DISABLE_SERVER_SIDE_CURSORS="1", DB_PREPARED_STATEMENTS="0"
    )
    assert database == {
        "cursors_off": True,
        "prepare_threshold": None,
        "engine": "django.db.backends.postgresql",
    }


@pytest.mark.parametrize("name", ["DB_DISABLE_SERVER_SIDE_CURSORS", "DB_PREPARED_STATEMENTS"])
def test_a_value_that_is_not_a_boolean_stops_start_up_naming_the_variable(name):
    result = _load(DATABASE_URL=POSTGRES, **{name: "transaction"})
    assert result.returncode != 0
    assert f"{name}='transaction' is not a boolean" in result.stderr
