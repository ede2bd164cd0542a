"""The collection uploads' Celery tasks (studies/tasks.py imports them, so the worker registers them)."""

from celery import shared_task

from studies.beat import beat_turn
from studies.library import sweep
from studies.library.services import upload_process


@shared_task(name="studies.tasks.collection_upload_process_task", acks_late=True)
def collection_upload_process_task(upload_id: int) -> str:
    """Read, import and index one browser upload; returns its final status. Idempotent: the service claims the
    upload with a conditional UPDATE, so a redelivered task finds it claimed and does nothing."""
    return upload_process(upload_id=upload_id).status


@shared_task(name="studies.tasks.stale_uploads_fail_task", acks_late=True)
def stale_uploads_fail_task(once_per_seconds: int | None = None) -> list[int]:
    """Fail the uploads whose worker stopped (no progress for UPLOAD_STALE_MINUTES) and delete their stored
    files; returns their ids. Idempotent (conditional UPDATEs). The beat passes `once_per_seconds`: a second
    beat's send within that interval does nothing (studies/beat.py)."""
    if once_per_seconds and not beat_turn(stale_uploads_fail_task.name, once_per_seconds):
        return []
    return sweep.uploads_stale_fail()
