"""The load benchmark's server (bench/load.py): gunicorn on 127.0.0.1 with the benchmark's settings, and the
CPU time that it, PostgreSQL and the load generator use."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def reference_loop_ms() -> float:
    """A fixed pure-Python workload, timed: how fast this machine is right now (best of three)."""
    best = float("inf")
    for _ in range(3):
        started, total = time.perf_counter(), 0
        for i in range(2_000_000):
            total += i * i % 7
        best = min(best, time.perf_counter() - started)
    return best * 1000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(database_url: str, index_root: str, conn_max_age: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND")}
    env.update(
        {
            "DATABASE_URL": database_url,
            "INDEX_ROOT": index_root,
            # Beside the indexes, collected by static_collect(): with DEBUG off pages name hashed files.
            "STATIC_ROOT": str(Path(index_root) / "_static"),
            "DB_CONN_MAX_AGE": str(conn_max_age),
            "DEBUG": "0",
            "SECRET_KEY": "load-benchmark-" + uuid.uuid4().hex,
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "0",
            "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0",
            "SECURE_HSTS_SECONDS": "0",
            "LOG_LEVEL": "WARNING",
            "DJANGO_SETTINGS_MODULE": "sessionlab.settings",
        }
    )
    return env


def static_collect(env: dict, cwd: Path = ROOT) -> None:
    """collectstatic into the server's STATIC_ROOT, as a deploy does: with DEBUG off a page names its scripts
    by their hashed names, read from the manifest collectstatic writes (about 10 s)."""
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=cwd,
        env=env,
        check=True,
    )


def gunicorn_start(
    env: dict,
    port: int,
    workers: int,
    threads: int,
    log_path: Path,
    worker_class: str = "sync",
    times_path: Path | None = None,
    cwd: Path = ROOT,
    app: str = "sessionlab.wsgi:application",
) -> subprocess.Popen:
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        app,
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--worker-class",
        worker_class,
        "--backlog",
        "2048",
        "--timeout",
        "60",
        "--graceful-timeout",
        "5",
        "--preload",
    ]
    if times_path is not None:  # gunicorn's own time of each request, in microseconds, a line each
        command += ["--access-logfile", str(times_path), "--access-logformat", "%(D)s"]
    if worker_class == "gthread":
        command += ["--threads", str(threads), "--keep-alive", "30"]
    log = open(log_path, "wb")  # noqa: SIM115 (the server owns it for its lifetime)
    return subprocess.Popen(
        command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )


def gunicorn_stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)


def wait_listening(port: int, process: subprocess.Popen, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"gunicorn exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"gunicorn did not listen on 127.0.0.1:{port} within {seconds} s")


def cpu_seconds(pgid: int | None = None, name: str | None = None) -> float:
    """CPU time (user + system) used so far by the processes of a process group, or of every process with this
    command name (Linux /proc), with that of their children that have exited (a PostgreSQL backend ends when
    its web worker's connection reaches DB_CONN_MAX_AGE)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            head, tail = stat.read_text().rsplit(")", 1)
        except (OSError, ValueError):
            continue
        fields = tail.split()
        if (pgid is not None and int(fields[2]) == pgid) or (
            name is not None and head.split("(", 1)[1] == name
        ):
            total += sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime
    return total / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    usage = os.times()
    return usage.user + usage.system
