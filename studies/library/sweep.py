"""Uploads whose worker stopped: failed, saying where, and their stored files deleted (docs/deploying.md,
"Shared storage for uploads").

A worker killed mid-upload (out of memory, a node replaced) leaves its upload in an in-progress status, and a
redelivered task finds it claimed and does nothing; a queued upload whose message the broker lost waits for
no one. Every report of progress stamps `updated_at` (studies/library/services.py), so an upload whose row has
not moved for UPLOAD_STALE_MINUTES has no live worker: the beat's `fail-stale-uploads` ends it as failed,
and so does its own page when the researcher looks at it (no beat needed on one machine). Each is claimed by
a conditional UPDATE on the status and time it was seen with, so a second sweep, or a worker's late report,
changes nothing twice.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from studies.library.storage import upload_discarded
from studies.models import CollectionUpload

logger = logging.getLogger(__name__)

Status = CollectionUpload.Status
IN_PROGRESS = (Status.QUEUED, Status.READING, Status.WRITING, Status.INDEXING)
NOTHING_IMPORTED = "Nothing was imported"
STORED_NOT_INDEXED = "The documents are stored; the indexes may not be"
# What the researcher reads on the upload page, per status it stopped in ({minutes}: the setting; {name}: the
# collection's, which an upload stopped while indexing has written).
STOPPED_WHILE = {
    Status.QUEUED: "No worker started this upload within {minutes} minutes (the task queue lost it, or no "
    "worker runs); nothing was imported. Upload the files again.",
    Status.READING: "The worker stopped while reading and checking the files (no progress for {minutes} "
    "minutes); nothing was imported. Upload the files again.",
    Status.WRITING: "The worker stopped while storing the documents (no progress for {minutes} minutes); "
    "nothing was imported. Upload the files again.",
    Status.INDEXING: "The worker stopped while building the search indexes (no progress for {minutes} "
    "minutes). The documents are stored as the collection “{name}”; rebuild its indexes with "
    "manage.py build_index, or let the first searches build them.",
}


def uploads_stale_fail(*, upload_id: int | None = None, now: datetime | None = None) -> list[int]:
    """End as failed every in-progress upload (or only `upload_id`) whose progress has not moved for
    UPLOAD_STALE_MINUTES, and delete its stored files; returns their ids. Idempotent."""
    now = now or timezone.now()
    minutes = settings.UPLOAD_STALE_MINUTES
    cutoff = now - timedelta(minutes=minutes)
    stale = CollectionUpload.objects.filter(status__in=IN_PROGRESS, updated_at__lt=cutoff)
    if upload_id is not None:
        stale = stale.filter(pk=upload_id)
    failed = []
    for pk, status, seen_at, name in stale.values_list("pk", "status", "updated_at", "name"):
        error = STOPPED_WHILE[Status(status)].format(minutes=minutes, name=name)
        if _failed(pk, status, seen_at, error, now):
            upload_discarded(pk)
            failed.append(pk)
            logger.warning("upload %s failed: no progress while %s for %s minutes", pk, status, minutes)
    return failed


def _failed(pk: int, status: str, seen_at: datetime, error: str, now: datetime) -> bool:
    """Claim the upload as seen (same status, same time) and fail it. A row a worker holds locked (writing
    the documents, on PostgreSQL) is skipped, not waited for: that worker is alive and stamps it on commit."""
    with transaction.atomic():
        seen = CollectionUpload.objects.filter(pk=pk, status=status, updated_at=seen_at)
        if not list(seen.select_for_update(skip_locked=True).values_list("pk", flat=True)):
            return False
        return bool(
            seen.update(
                status=Status.FAILED,
                progress=100,
                stage=NOTHING_IMPORTED if status != Status.INDEXING else STORED_NOT_INDEXED,
                error=error,
                updated_at=now,
            )
        )
