"""Celery tasks of a power plan: ids in, services called. A plan is a chord: its chunks (one participant count,
a few hundred replications each) run in parallel on any worker, then one task closes it. Every chunk is an
upsert keyed by (plan, count, start) with its own seed, so a re-delivered task changes nothing (acks_late).

These are registered by name through CELERY_IMPORTS (sessionlab/settings.py): autodiscovery finds only
scoring/tasks.py.
"""

from celery import chord, shared_task
from django.db import InterfaceError, OperationalError

from . import services

TRANSIENT = {"autoretry_for": (OperationalError, InterfaceError), "retry_backoff": True, "max_retries": 5}


@shared_task(name="scoring.planning.tasks.power_plan_start_task", acks_late=True, **TRANSIENT)
def power_plan_start_task(plan_id: int) -> int:
    """Start a plan: fix its sample, then run its chunks as a chord; returns the chunk count."""
    try:
        chunks = services.power_plan_start(plan_id=plan_id)
    except services.PlanningError as exc:
        services.power_plan_fail(plan_id=plan_id, message=str(exc))
        return 0
    if chunks is None:
        return 0
    header = [power_chunk_task.s(plan_id, count, start, size) for count, start, size in chunks]
    body = power_plan_finish_task.s(plan_id).on_error(power_plan_failed_task.s(plan_id))
    chord(header)(body)
    return len(chunks)


@shared_task(name="scoring.planning.tasks.power_chunk_task", acks_late=True, **TRANSIENT)
def power_chunk_task(plan_id: int, count: int, start: int, replications: int) -> int:
    return services.power_chunk_compute(plan_id=plan_id, count=count, start=start, replications=replications)


@shared_task(name="scoring.planning.tasks.power_plan_finish_task", acks_late=True, **TRANSIENT)
def power_plan_finish_task(rejections: list[int], plan_id: int) -> int:
    services.power_plan_finish(plan_id=plan_id)
    return sum(rejections or [])


@shared_task(name="scoring.planning.tasks.power_plan_failed_task")
def power_plan_failed_task(request, exc, traceback, plan_id: int) -> None:
    """A chunk raised something the service did not expect: say so on the plan."""
    services.power_plan_fail(plan_id=plan_id, message=f"a planning task failed: {exc!r}")
