"""`make serve`: a newcomer's own study is served from the database as it is, nothing re-created. The test
follows the README's "Your own study" steps as written: step 1's `make serve` (its commands read from the
Makefile with `make -n`, so the test follows the recipe) on a fresh SQLite database, then step 2's command,
copied from the README, makes the account while the server runs; the one-time password it prints signs in
through the login form, and the account, a researcher and no superuser, reaches /studies/."""

import http.cookiejar
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def readme_step(number: int) -> str:
    """Step `number` of the README's "Your own study", as written."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Your own study\n", 1)[1].split("\n## ", 1)[0]
    steps = re.split(r"\n(?=\d\. )", section)
    [step] = [text for text in steps if text.startswith(f"{number}. ")]
    return " ".join(step.split())


def readme_command(number: int) -> str:
    """The first command (a `...` span naming manage.py or make) of step `number` of "Your own study"."""
    spans = re.findall(r"`([^`]+)`", readme_step(number))
    return next(span for span in spans if "manage.py" in span or span.startswith("make "))


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
    assert readme_command(1) == "make serve"
    port = free_port()
    migrate, runserver = serve_commands(port)
    assert "migrate --noinput -v 0" in migrate and f"runserver 127.0.0.1:{port}" in runserver
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'own.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "sessionlab.settings",
    }
    env.pop("CELERY_BROKER_URL", None)
    quiet = subprocess.run(migrate, shell=True, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert quiet.stdout.strip() == ""  # migrations quiet
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
        account = readme_command(2)
        assert "manage.py create_researcher" in account, account
        made = subprocess.run(
            account, shell=True, cwd=ROOT, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL
        )
        assert made.returncode == 0, made.stderr
        username = re.search(r"create_researcher (\S+)", account).group(1)
        password = re.search(r"One-time password: (\S+)", made.stdout).group(1)
        assert f"sign in as `{username}`" in readme_step(2)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login).group(1)
        form = urllib.parse.urlencode(
            {"username": username, "password": password, "csrfmiddlewaretoken": token}
        ).encode()
        request = urllib.request.Request(
            f"{base}/accounts/login/", data=form, headers={"Referer": base + "/"}
        )
        signed_in = browser.open(request, timeout=10)
        assert urllib.parse.urlsplit(signed_in.url).path != "/accounts/login/"  # the password was taken
        studies = browser.open(f"{base}/studies/", timeout=10)
        assert studies.status == 200 and "New study" in studies.read().decode()
        with pytest.raises(urllib.error.HTTPError) as refused:  # a researcher, not a superuser
            browser.open(f"{base}/admin/studies/study/", timeout=10)
        assert refused.value.code == 403
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=10)
