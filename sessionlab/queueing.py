"""Queue a Celery task from a request without letting a broker outage fail the request.

`delay_on_commit(task, *args)` queues the task when the transaction commits. If the broker cannot be reached,
the error is logged and swallowed: what the request wrote is committed and stays (events live in the
database, not in the broker), and whatever the task would have done is owed. The scoring services mark the
run stale before queueing, so `manage.py requeue_stale_runs` (the beat schedule runs it; or run it once the
broker is back) queues every run that is stale with no pass since, and grows the assessment pools of their
studies.

In eager mode (no broker: development, the test suite's first pass) the task runs in-process and its errors
propagate as before.
"""

from __future__ import annotations

import logging

from celery import current_app
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# What kombu, the Redis client and the socket layer raise when the broker is down or unreachable.
BROKER_ERRORS = (BrokerError, RedisError, ConnectionError, TimeoutError)


def task_named(name: str):
    """The registered Celery task called `name` (its explicit `name=`). Services queue the tasks that call
    them by name, so a service module never imports its tasks module: no import cycle, and the name is the one
    the broker and the beat schedule hold. A process that has not imported its tasks modules yet (a web
    process before its first queueing) imports them here, as a worker does at start."""
    if name not in current_app.tasks:
        current_app.loader.import_default_modules()
    return current_app.tasks[name]


def delay_or_log(task, *args, on_failure=None) -> bool:
    """Queue `task(*args)` (its result ignored); False (logged) when the broker cannot take it, after calling
    `on_failure(exc)` (which records what is owed)."""
    if task.app.conf.task_always_eager:
        task.delay(*args)
        return True
    try:
        # Nobody waits on these: ignore_result keeps `delay` from subscribing to the Redis result backend,
        # which would retry for 20 s and then raise when Redis is down.
        task.apply_async(args, ignore_result=True)
    except BROKER_ERRORS as exc:
        logger.error(
            "could not queue %s%r, the broker is unreachable (%s); left for requeue_stale_runs",
            task.name,
            args,
            exc,
        )
        if on_failure is not None:
            on_failure(exc)
        return False
    return True


def delay_on_commit(task, *args, on_failure=None) -> None:
    transaction.on_commit(lambda: delay_or_log(task, *args, on_failure=on_failure))
