"""Celery tasks: they take ids, call a selector and a service, and are idempotent (so acks_late is safe)."""

from celery import shared_task
from django.conf import settings

from studies.beat import beat_turn
from studies.design.selectors import collection_by_id
from studies.library.tasks import (  # noqa: F401  (registered with the worker)
    collection_upload_process_task,
    stale_uploads_fail_task,
)
from studies.search.systems import collection_index_build


@shared_task(name="studies.tasks.collection_index_build_task", acks_late=True)
def collection_index_build_task(collection_id: int, configuration: str) -> int:
    """Build the index of one collection for one configuration; returns the number of documents indexed.
    Queue it with `transaction.on_commit(lambda: collection_index_build_task.delay(pk, name))`."""
    return collection_index_build(collection=collection_by_id(collection_id), configuration=configuration)


@shared_task(name="studies.tasks.assessment_pools_grow_task", acks_late=True)
def assessment_pools_grow_task(study_id: int, scenario_id: int) -> int:
    """Grow the scenario's assessment pool with what new sessions brought (a pool_build is idempotent).
    Only pools a researcher has built grow by themselves; returns the number of documents added."""
    from studies.assessment.pools import pool_build
    from studies.assessment.selectors import scenario_with_pool

    scenario = scenario_with_pool(study_id=study_id, scenario_id=scenario_id)
    if scenario is None:
        return 0
    changes = pool_build(study=scenario.study, scenarios=[scenario])
    return sum(change.added for change in changes.values())


@shared_task(name="studies.tasks.overdue_sweep_task", acks_late=True)
def overdue_sweep_task(study_id: int | None = None, once_per_seconds: int | None = None) -> dict:
    """End overdue sessions and time out overdue participants (studies.participation.recruitment.study_sweep),
    in one study or in every study that may hold something overdue (participation.selectors.studies_to_sweep):
    the beat schedule runs it every OVERDUE_SWEEP_SECONDS, so a participant who closed the tab is timed out
    (and scored) without coming back. Idempotent (conditional UPDATEs). Returns the totals. The beat passes
    `once_per_seconds`: a second beat's send within that interval does nothing (studies/beat.py)."""
    from studies.participation.recruitment.selectors import studies_to_sweep
    from studies.participation.recruitment.sweep import scheduler_heartbeat, study_sweep

    totals = {"studies": 0, "sessions_ended": 0, "timed_out": 0, "states_changed": 0}
    if once_per_seconds and not beat_turn(overdue_sweep_task.name, once_per_seconds):
        return totals | {"skipped": 1}
    scheduler_heartbeat()  # the recruitment page reads it: a scheduler sweeps (docs/recruitment.md)
    for study in studies_to_sweep(study_id=study_id):
        result = study_sweep(study=study)
        totals["studies"] += 1
        totals["sessions_ended"] += result.sessions_ended
        totals["timed_out"] += result.timed_out
        totals["states_changed"] += result.states_changed
    return totals


@shared_task(
    name="studies.tasks.llm_run_task",
    acks_late=True,
    bind=True,
    soft_time_limit=settings.LLM_RUN_SOFT_TIME_LIMIT_SECONDS,
    time_limit=settings.LLM_RUN_TIME_LIMIT_SECONDS,
)
def llm_run_task(self, run_id: int) -> str | None:
    """An LLM assessor's run (studies.assessment.llm.runs): every pool document it has not graded, each
    request kept, each grade stored with its request. Idempotent (only a queued run starts; graded documents
    are skipped). Routed to the `llm` queue (CELERY_TASK_ROUTES). A run whose lab has LLM_RUNS_PER_LAB runs
    running stays queued and is tried again later. Returns the run's final status."""
    from studies.assessment.llm.runs import LabAtCap, llm_run_execute

    try:
        run = llm_run_execute(run_id=run_id, eager=self.request.is_eager)
    except LabAtCap:
        raise self.retry(countdown=settings.LLM_LAB_WAIT_SECONDS, max_retries=None) from None
    return run.status if run is not None else None


@shared_task(
    name="studies.tasks.llm_audit_task",
    acks_late=True,
    soft_time_limit=settings.LLM_RUN_SOFT_TIME_LIMIT_SECONDS,
    time_limit=settings.LLM_RUN_TIME_LIMIT_SECONDS,
)
def llm_audit_task(audit_id: int) -> str | None:
    """A robustness audit of an LLM assessor (studies.assessment.llm.audits): the people's documents and
    their seeded variants sent to the model, the figures computed at the end. Idempotent (only a queued
    audit starts; an answered item is not sent again). Routed to the `llm` queue (CELERY_TASK_ROUTES), with
    a run's time limits. Returns the audit's final status."""
    from studies.assessment.llm.audits import llm_audit_execute

    audit = llm_audit_execute(audit_id=audit_id)
    return audit.status if audit is not None else None
