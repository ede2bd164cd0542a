"""`make serve` (issue 38): a newcomer's own study is served from the database as it is, nothing re-created.
Its commands (read from the Makefile with `make -n`, so the test follows the recipe) run on a fresh SQLite
database; a superuser made the README's way signs in through the login form and reaches /studies/."""

import http.cookiejar
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_commands(port: int) -> list[str]:
    made = subprocess.run(
        ["make", "-n", "serve", f"PORT={port}"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return [line.strip() for line in made.stdout.splitlines() if "manage.py" in line]


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell and process group")
def test_make_serve_migrates_a_fresh_database_and_a_researcher_reaches_their_studies(tmp_path):
    port = free_port()
    migrate, runserver = serve_commands(port)
    assert "migrate --noinput -v 0" in migrate and f"runserver 127.0.0.1:{port}" in runserver
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'own.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "sessionlab.settings",
        "DJANGO_SUPERUSER_USERNAME": "me",
        "DJANGO_SUPERUSER_PASSWORD": "a-long-password-1",
        "DJANGO_SUPERUSER_EMAIL": "me@example.org",
    }
    env.pop("CELERY_BROKER_URL", None)
    quiet = subprocess.run(migrate, shell=True, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert quiet.stdout.strip() == ""  # migrations quiet
    subprocess.run(
        "DEBUG=1 .venv/bin/python manage.py createsuperuser --noinput",
        shell=True,
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    server = subprocess.Popen(
        runserver + " --noreload",
        shell=True,
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        jar = http.cookiejar.CookieJar()
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        deadline = time.monotonic() + 60
        while True:
            try:
                login = browser.open(f"{base}/accounts/login/", timeout=5).read().decode()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login).group(1)
        form = urllib.parse.urlencode(
            {"username": "me", "password": "a-long-password-1", "csrfmiddlewaretoken": token}
        ).encode()
        request = urllib.request.Request(
            f"{base}/accounts/login/", data=form, headers={"Referer": base + "/"}
        )
        browser.open(request, timeout=10)
        studies = browser.open(f"{base}/studies/", timeout=10)
        assert studies.status == 200 and "New study" in studies.read().decode()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=10)
