"""Celery tasks: they take ids, call a service, and are idempotent (so acks_late is safe)."""

from celery import shared_task

from .models import Collection
from .search_systems import collection_index_build


@shared_task(acks_late=True)
def collection_index_build_task(collection_id: int, configuration: str) -> int:
    """Build the index of one collection for one configuration; returns the number of documents indexed.
    Queue it with `transaction.on_commit(lambda: collection_index_build_task.delay(pk, name))`."""
    collection = Collection.objects.get(pk=collection_id)
    return collection_index_build(collection=collection, configuration=configuration)
