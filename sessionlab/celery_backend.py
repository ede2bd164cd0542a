"""Which Celery result backend goes with which broker (docs/deploying.md, "Celery: broker and result
backend"). Pure: settings.py calls it at import, so a wrong pair stops start-up with what to set.

Scoring runs and power plans are chords (scoring/tasks.py, scoring/planning/tasks.py): the chunks run on any
worker and the body runs once all have finished, which the result backend tracks. Nothing else reads a result
(no AsyncResult or .get() in the code: progress lives in the database), but a chord needs a backend that
supports chords and that every worker shares. So:

- redis:// or rediss:// broker, no backend set: the same Redis (its URL).
- amqp:// broker (RabbitMQ), no backend set: refused. RabbitMQ itself holds no chord: `rpc://` sends results
  to the client that queued the task and Celery refuses chords on it, and the `amqp://` result backend left
  Celery in 5.0. A Redis (or a database backend Celery is installed for) must be named.
- A backend Celery cannot use for them, whatever the broker: `amqp://`, `rpc://`, or an in-process
  `cache+memory://` with a real broker (each process would see only its own results).
- No broker (eager mode): no backend needed; the in-process memory:// broker gets the in-process cache.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

SHARED_REDIS_HINT = (
    "set CELERY_RESULT_BACKEND=redis://host:6379/1 (a Redis every worker and web node reaches)"
)


def _scheme(url: str) -> str:
    return url.split("://", 1)[0].lower() if "://" in url else ""


def result_backend_for(broker_url: str | None, result_backend: str | None) -> str | None:
    """The result backend to use for `broker_url` (None: eager mode) given CELERY_RESULT_BACKEND (None or
    empty: unset); raises ImproperlyConfigured for a pair that cannot run a chord across workers."""
    result_backend = (result_backend or "").strip() or None
    broker = _scheme(broker_url or "")
    if result_backend is not None:
        scheme = _scheme(result_backend)
        if scheme in ("amqp", "amqps"):
            raise ImproperlyConfigured(
                f"CELERY_RESULT_BACKEND={scheme}://... is not a result backend Celery still has (removed in "
                f"Celery 5); {SHARED_REDIS_HINT}"
            )
        if scheme == "rpc":
            raise ImproperlyConfigured(
                "CELERY_RESULT_BACKEND=rpc:// cannot run scoring runs and power plans: Celery refuses chords "
                f"on it, and its results reach only the process that queued the task; {SHARED_REDIS_HINT}"
            )
        if result_backend.lower().startswith("cache+memory") and broker not in ("", "memory"):
            raise ImproperlyConfigured(
                "CELERY_RESULT_BACKEND=cache+memory:// keeps results in each process's memory, which "
                f"workers on a real broker do not share; {SHARED_REDIS_HINT}"
            )
        return result_backend
    if broker in ("redis", "rediss"):
        return broker_url
    if broker == "memory":
        return "cache+memory://"
    if broker in ("amqp", "amqps", "pyamqp"):
        raise ImproperlyConfigured(
            "CELERY_BROKER_URL is RabbitMQ (amqp://) and CELERY_RESULT_BACKEND is unset: scoring runs and "
            "power plans are chords, which need a result backend every worker shares, and RabbitMQ cannot "
            f"be one (rpc:// refuses chords); {SHARED_REDIS_HINT}"
        )
    return None
