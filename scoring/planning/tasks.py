"""Celery tasks of a power plan: ids in, services called. A plan is a chord: its chunks (one participant
count, a few hundred replications each) run in parallel on any worker, then one task closes it. Every chunk is
an upsert keyed by (plan, count, start) with its own seed, so a re-delivered task changes nothing (acks_late).
A simulated plan first runs a chord of pool chunks (a block of simulated searchers each, kept on the plan by
chunk number), whose body joins the pool and starts the power chord.

These are registered by name through CELERY_IMPORTS (sessionlab/settings.py): autodiscovery finds only
scoring/tasks.py.
"""

from celery import chord, shared_task

from ..tasks import TRANSIENT  # transient database errors are retried as in a scoring run
from . import services


def _power_chord(plan_id: int, chunks: list) -> int:
    header = [power_chunk_task.s(plan_id, count, start, size) for count, start, size in chunks]
    body = power_plan_finish_task.s(plan_id).on_error(power_plan_failed_task.s(plan_id))
    chord(header)(body)
    return len(chunks)


@shared_task(name="scoring.planning.tasks.power_plan_start_task", acks_late=True, **TRANSIENT)
def power_plan_start_task(plan_id: int) -> int:
    """Start a plan: a simulated one simulates its pool first; otherwise fix its sample and run its chunks as
    a chord. Returns the chunk count."""
    try:
        pool = services.power_pool_start(plan_id=plan_id)
        if pool:
            header = [power_pool_chunk_task.s(plan_id, chunk, participants) for chunk, participants in pool]
            chord(header)(power_pool_ready_task.s(plan_id).on_error(power_plan_failed_task.s(plan_id)))
            return len(pool)
        chunks = services.power_plan_start(plan_id=plan_id)
    except services.PlanningError as exc:
        services.power_plan_fail(plan_id=plan_id, message=str(exc))
        return 0
    if chunks is None:
        return 0
    return _power_chord(plan_id, chunks)


@shared_task(name="scoring.planning.tasks.power_pool_chunk_task", acks_late=True, **TRANSIENT)
def power_pool_chunk_task(plan_id: int, chunk: int, participants: int) -> int:
    return services.power_pool_chunk(plan_id=plan_id, chunk=chunk, participants=participants)


@shared_task(name="scoring.planning.tasks.power_pool_ready_task", acks_late=True, **TRANSIENT)
def power_pool_ready_task(sessions: list[int], plan_id: int) -> int:
    chunks = services.power_pool_finish(plan_id=plan_id)
    return _power_chord(plan_id, chunks) if chunks else 0


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
