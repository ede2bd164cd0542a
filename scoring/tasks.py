"""Celery tasks of a scoring run. They take ids and call services; every write is an upsert keyed by
(run, session), so a re-delivered task changes nothing and acks_late is safe.

A pass is a chord: the sessions are split into chunks scored in parallel (a group, one task per chunk, so
more workers on more machines make it faster), then one task closes the pass. Queue a pass with
`transaction.on_commit(lambda: scoring_run_start_task.delay(run_id, session_ids_or_None))`, which the
services do.
"""

from typing import Final, TypedDict

from celery import chord, shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from studies.beat import beat_turn

from . import services


class RetryOptions(TypedDict):
    """The retry keywords of @shared_task, typed so that `**TRANSIENT` matches celery's overloads."""

    autoretry_for: tuple[type[BaseException], ...]
    retry_backoff: bool
    max_retries: int


# Only transient errors are retried (a lost connection, a locked SQLite file); bad data fails the run.
TRANSIENT: Final[RetryOptions] = {
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": True,
    "max_retries": 5,
}


@shared_task(name="scoring.tasks.scoring_run_start_task", acks_late=True, **TRANSIENT)
def scoring_run_start_task(
    run_id: int, session_ids: list[int] | None = None, chunk_size: int | None = None
) -> int:
    """Start a pass over a run's sessions (all of them when session_ids is None) in chunks of chunk_size
    sessions (services.CHUNK_SIZE by default); returns the chunk count."""
    plan = services.scoring_pass_start(
        run_id=run_id, session_ids=session_ids, chunk_size=chunk_size or services.CHUNK_SIZE
    )
    if plan is None:
        return 0
    pass_number, chunks = plan
    full = session_ids is None
    if not chunks:
        services.scoring_pass_finish(run_id=run_id, pass_number=pass_number, full=full)
        return 0
    header = [scoring_chunk_task.s(run_id, pass_number, ids) for ids in chunks]
    body = scoring_run_finish_task.s(run_id, pass_number, full).on_error(scoring_run_failed_task.s(run_id))
    chord(header)(body)
    return len(chunks)


@shared_task(name="scoring.tasks.scoring_chunk_task", acks_late=True, **TRANSIENT)
def scoring_chunk_task(run_id: int, pass_number: int, session_ids: list[int]) -> int:
    return services.scoring_chunk_score(run_id=run_id, pass_number=pass_number, session_ids=session_ids)


@shared_task(name="scoring.tasks.scoring_run_finish_task", acks_late=True, **TRANSIENT)
def scoring_run_finish_task(scored: list[int], run_id: int, pass_number: int, full: bool) -> int:
    services.scoring_pass_finish(run_id=run_id, pass_number=pass_number, full=full)
    return sum(scored or [])


@shared_task(name="scoring.tasks.scoring_run_failed_task")
def scoring_run_failed_task(request, exc, traceback, run_id: int) -> None:
    """A chunk raised something the service did not expect: say so on the run."""
    services.scoring_run_fail(run_id=run_id, message=f"a scoring task failed: {exc!r}")


@shared_task(name="scoring.tasks.stale_runs_requeue_task", acks_late=True, **TRANSIENT)
def stale_runs_requeue_task(once_per_seconds: int | None = None) -> list[int]:
    """What `manage.py requeue_stale_runs` does, for the beat schedule (CELERY_BEAT_SCHEDULE): queue a full
    pass of every run that owes one; returns the ids of the runs queued. Idempotent: a run owes a pass until a
    worker starts one, so a sweep that comes round before then queues it again, which costs time, not
    correctness (passes are upserts; the latest pass number wins). The beat passes `once_per_seconds`: a
    second beat's send within that interval does nothing (studies/beat.py)."""
    if once_per_seconds and not beat_turn(stale_runs_requeue_task.name, once_per_seconds):
        return []
    return services.stale_runs_requeue(stuck_after_minutes=settings.REQUEUE_STUCK_MINUTES)
