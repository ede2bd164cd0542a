"""A Celery worker played by a thread of the test, beside the browser, so that a page can be watched while a
task works: the tasks of the names given are held when queued (every other task runs eagerly, as everywhere
in the tests), and `start()` runs them in a thread, as a worker process would.

On SQLite the thread shares the test's in-memory connection, as the live server's threads do, and holds the
live server's request lock while it uses it (tests/conftest.py: two threads in one sqlite3 connection can
deadlock); it lets go of the lock inside the functions named in `unlocked` (a model server's answer, say),
where it does not touch the database, so the browser's requests are answered meanwhile. With PostgreSQL the
thread has a connection of its own and no lock is needed."""

from __future__ import annotations

import contextlib
import functools
import threading

from django.db import connections

from sessionlab import queueing


class WorkerThread:
    def __init__(self, monkeypatch, live_server, task_names, unlocked=()):
        """`unlocked`: (module, attribute name) of the functions during which the lock is let go."""
        self.task_names = set(task_names)
        self.queued: list[tuple] = []
        self.lock = getattr(live_server.thread.httpd, "request_lock", None)
        self.shared = dict(live_server.thread.connections_override or {})
        self.thread: threading.Thread | None = None
        self.error: BaseException | None = None
        eager = queueing.delay_or_log

        def held_or_eager(task, *args, on_failure=None):
            if task.name in self.task_names:
                self.queued.append((task, args))
                return True
            return eager(task, *args, on_failure=on_failure)

        monkeypatch.setattr(queueing, "delay_or_log", held_or_eager)
        for module, name in unlocked:
            monkeypatch.setattr(module, name, self._unlocked(getattr(module, name)))

    def _unlocked(self, function):
        @functools.wraps(function)
        def call(*args, **kwargs):
            if self.lock is None or threading.current_thread() is not self.thread:
                return function(*args, **kwargs)
            self.lock.release()
            try:
                return function(*args, **kwargs)
            finally:
                self.lock.acquire()

        return call

    def start(self) -> None:
        """Run the held tasks, in the order they were queued, in a thread."""
        assert self.queued, "no task was queued"
        self.thread = threading.Thread(target=self._work, daemon=True)
        self.thread.start()

    def _work(self) -> None:
        for alias, connection in self.shared.items():
            connections[alias] = connection
        try:
            with self.lock or contextlib.nullcontext():
                while self.queued:
                    task, args = self.queued.pop(0)
                    task(*args)
        except BaseException as error:  # re-raised in the test's thread by finish()
            self.error = error
        finally:
            if not self.shared:
                connections.close_all()  # this thread's own connections (PostgreSQL)

    def finish(self, timeout: float = 60) -> None:
        """Wait for the thread's end; its error, if any, is raised here."""
        if self.thread is not None:
            self.thread.join(timeout)
            assert not self.thread.is_alive(), f"the worker's tasks did not end in {timeout} s"
        if self.error is not None:
            raise self.error
