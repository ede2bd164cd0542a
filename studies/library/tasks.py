"""The collection uploads' Celery task (studies/tasks.py imports it, so the worker registers it)."""

from celery import shared_task

from studies.library.services import upload_process


@shared_task(name="studies.tasks.collection_upload_process_task", acks_late=True)
def collection_upload_process_task(upload_id: int) -> str:
    """Read, import and index one browser upload; returns its final status. Idempotent: the service claims the
    upload with a conditional UPDATE, so a redelivered task finds it claimed and does nothing."""
    return upload_process(upload_id=upload_id).status
