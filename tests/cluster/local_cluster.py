"""A cluster on one machine (docs/deploying.md): web nodes, Celery workers and beats, each started from a copy
of the checkout of its own, so that nothing one writes to its disk (indexes, uploads, static files) is seen by
another; they share only the declared services (PostgreSQL, Redis, an S3-compatible store). The installed
packages (the virtualenv) are the one thing read from a common place, as an image's would be.

Used by the multi-node test (tests/cluster/) and by the load benchmark's `--nodes` (bench/load.py)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def checkout_copy(target: Path, source: Path = ROOT) -> Path:
    """The files git knows (tracked, and new ones not ignored) as they are in the working tree: a host's
    deployment of this code, with none of the source's indexes, uploads, database or collected static
    files."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=source,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        relative = Path(os.fsdecode(name))
        origin = source / relative
        if not origin.is_file():  # deleted in the working tree but still in the index
            continue
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(origin, target / relative)
    return target


def node_environment(**settings: str) -> dict[str, str]:
    """Production settings (DEBUG off) for a process of the cluster, served over plain HTTP on loopback; the
    caller adds the services (DATABASE_URL, CELERY_BROKER_URL, CACHE_URL, UPLOAD_STORAGE_URL, ...)."""
    inherited = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    env = {name: os.environ[name] for name in inherited if name in os.environ}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "sessionlab.settings",
            "DEBUG": "0",
            "SECRET_KEY": "cluster-" + uuid.uuid4().hex,
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECURE_SSL_REDIRECT": "0",
            "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0",
            "SECURE_HSTS_SECONDS": "0",
            "LOG_LEVEL": "INFO",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(settings)
    return env


@dataclass
class Process:
    """One process of the cluster, started in its own copy and process group, logging to a file there."""

    name: str
    folder: Path
    command: list[str]
    env: dict[str, str]
    port: int | None = None
    popen: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def log_path(self) -> Path:
        return self.folder / f"{self.name}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Process:
        log = open(self.log_path, "ab")  # noqa: SIM115 (the process owns it for its lifetime)
        self.popen = subprocess.Popen(
            self.command,
            cwd=self.folder,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.popen is None or self.popen.poll() is not None:
            return
        os.killpg(self.popen.pid, signal.SIGTERM)
        try:
            self.popen.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(timeout=5)

    def wait_ready(self, path: str = "/health/live", seconds: float = 60) -> None:
        """Until the node answers `path` with 200; the log's end in the error otherwise."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.popen is not None and self.popen.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.popen.returncode}:\n{self.log()[-3000:]}")
            try:
                with urllib.request.urlopen(self.url + path, timeout=2) as answer:
                    if answer.status == 200:
                        return
            except (OSError, urllib.error.HTTPError):
                pass
            time.sleep(0.2)
        raise RuntimeError(f"{self.name} did not answer {path} within {seconds} s:\n{self.log()[-3000:]}")


def manage(folder: Path, env: dict[str, str], *arguments: str, timeout: float = 300) -> str:
    """`manage.py <arguments>` in a copy, as a deploy step runs it there; its output, or an error with it."""
    done = subprocess.run(
        [str(BIN / "python"), "manage.py", *arguments],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"manage.py {' '.join(arguments)} failed in {folder}:\n{done.stdout}\n{done.stderr}"
        )
    return done.stdout


def web_node(
    name: str, folder: Path, env: dict[str, str], workers: int = 2, access_log: bool = False
) -> Process:
    """gunicorn serving the copy in `folder` (static files collected there first, as a deploy does)."""
    manage(folder, env, "collectstatic", "--noinput", "--verbosity", "0")
    port = free_port()
    command = [
        str(BIN / "gunicorn"),
        "sessionlab.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--timeout",
        "60",
        "--graceful-timeout",
        "5",
        "--backlog",
        "2048",
    ]
    if (
        access_log
    ):  # the request's own time in microseconds, a line each (the load benchmark's per-node figures)
        command += ["--access-logfile", str(folder / f"{name}.times"), "--access-logformat", "%(D)s"]
    return Process(name, folder, command, env, port=port)


def worker(name: str, folder: Path, env: dict[str, str], concurrency: int = 2) -> Process:
    command = [
        str(BIN / "celery"),
        "-A",
        "sessionlab",
        "worker",
        "--hostname",
        f"{name}@%h",
        "--concurrency",
        str(concurrency),
        "--loglevel",
        "INFO",
        "--without-gossip",
        "--without-mingle",
    ]
    return Process(name, folder, command, env)


def beat(name: str, folder: Path, env: dict[str, str]) -> Process:
    command = [
        str(BIN / "celery"),
        "-A",
        "sessionlab",
        "beat",
        "--loglevel",
        "INFO",
        "--schedule",
        str(folder / f"{name}-schedule"),
    ]
    return Process(name, folder, command, env)
