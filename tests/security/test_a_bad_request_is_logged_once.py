"""A refused request is logged once: with DEBUG on (`make demo`, `make serve`), Django's own "django" logger
had a console handler of its own and its records reached the root's as well, so every 400, 401 and 404
printed twice on the server's output. Run in a fresh process, as the server configures its logging."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REQUESTS = """
import django
django.setup()
from django.test import Client
client = Client()
client.get("/", HTTP_HOST="not-ours.example")  # 400: DisallowedHost
client.post("/api/studies/", "{", content_type="application/json")  # 401 Unauthorized
client.get("/no/such/page/")  # 404
"""


def test_each_refusal_is_one_line_on_the_server_s_output(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="sessionlab.settings",
        DEBUG="1",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        PYTHONPATH=str(ROOT),
    )
    env.pop("CELERY_BROKER_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", REQUESTS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert sum(line.startswith("Invalid HTTP_HOST header: 'not-ours.example'") for line in lines) == 1
    assert lines.count("Unauthorized: /api/studies/") == 1
    assert lines.count("Not Found: /no/such/page/") == 1
