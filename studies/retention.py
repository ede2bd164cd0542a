"""Retention of the event log (docs/deploying.md, "The event log"): the events of old, closed studies archived
to the upload storage (studies/library/storage.py: local disk, or S3 with UPLOAD_STORAGE_URL), read back
and verified, and only then deleted; an archive can be read (`archived_events`) or put back
(`study_events_restore`).

An archive is one gzipped JSON Lines file, `event-archives/<slug>-<study id>-<UTC time>.jsonl.gz`, one event a
line in id order, each {"id", "participant_id", "participant", "session_id", "type", "client_event_id",
"sequence", "client_time", "server_time", "payload", "origin"} (times ISO 8601 UTC, or null). The sha256 and
the line count of the uncompressed lines are kept in EventArchive; before the delete, the file is read back
from the storage and both must match, and the rows about to be deleted are serialised again inside the
deleting transaction and must give the same sha256: what is deleted is exactly what the storage holds.

What is never archived: a study that is open or paused, closed more recently than the cut-off, holding no
events, or holding a client time Python cannot read back (`archive_refusal`). Nor one whose scores are not
current, but that is scoring's to say: the command, `manage.py archive_events`, lives in scoring (it may
import both apps, as `load_demo` does) and refuses such a study before it calls `study_events_archive`.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from django.core.files import File
from django.db import transaction
from django.db.models import Max, Min
from django.utils import timezone

from sessionlab import plain_sql
from studies.design.lifecycle import CLOSED
from studies.errors import EventArchiveError
from studies.kernel.event_log import events_readable, study_events_in_log_order
from studies.library.storage import upload_storage
from studies.models import AuditAction, AuditEntry, Event, EventArchive, Study

ARCHIVE_FOLDER = "event-archives"
ROWS_PER_READ = 2000
_COLUMNS = ("id", "participant", "session", "type", "client_event_id", "sequence", "client_time")
_RESTORED = (*_COLUMNS, "server_time", "payload", "origin")


def events_archived(study_id: int) -> bool:
    """Whether some of the study's events are in an archive and not back in the log (scoring refuses then)."""
    return EventArchive.objects.filter(study_id=study_id, restored_at__isnull=True).exists()


@dataclass
class ArchivePlan:
    study: Study
    events: int
    refusal: str | None  # why it is not archived; None: it would be


def archive_refusal(study: Study, *, closed_before: datetime) -> str | None:
    """Why the study's events must stay in the log, or None."""
    status = study.status or "open"
    if status != CLOSED:
        return f"the study is {status}: only closed studies are archived"
    if study.status_changed_at is None or study.status_changed_at > closed_before:
        when = f"{study.status_changed_at:%Y-%m-%d}" if study.status_changed_at else "at an unknown time"
        return f"closed {when}, after the cut-off {closed_before:%Y-%m-%d}"
    events = Event.objects.filter(participant__study=study)
    if not events.exists():
        return "no events in the log" + (" (archived already)" if events_archived(study.pk) else "")
    if events_readable(events).filter(client_time__isnull=False, readable_client_time__isnull=True).exists():
        return "a client time beyond what Python reads (stored before such times were refused) would be lost"
    return None


def archive_plans(*, closed_before: datetime, studies: Iterable[Study] | None = None) -> list[ArchivePlan]:
    """For each study (default: every closed one), its events and why it would not be archived, if so."""
    chosen = Study.objects.filter(status=CLOSED) if studies is None else studies
    return [
        ArchivePlan(
            study=study,
            events=Event.objects.filter(participant__study=study).count(),
            refusal=archive_refusal(study, closed_before=closed_before),
        )
        for study in chosen
    ]


def _lines(study: Study, last_id: int | None = None) -> Iterator[bytes]:
    # In id order, read through the study's participants, never by a walk of the whole log's primary key.
    events = study_events_in_log_order(study.pk).select_related("participant")
    if last_id is not None:
        events = events.filter(id__lte=last_id)
    for event in events_readable(events).iterator(chunk_size=ROWS_PER_READ):
        event.client_time = event.readable_client_time  # archive_refusal: never None for a time that exists
        yield _line(event)


def _utc(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()


def _line(event: Event) -> bytes:
    row = {
        "id": event.pk,
        "participant_id": event.participant_id,
        "participant": event.participant.code,
        "session_id": event.session_id,
        "type": event.type,
        "client_event_id": event.client_event_id,
        "sequence": event.sequence,
        "client_time": _utc(event.client_time),
        "server_time": _utc(event.server_time),
        "payload": event.payload,
        "origin": event.origin,
    }
    return json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8") + b"\n"


@dataclass
class _Written:
    key: str
    events: int
    sha256: str
    compressed_bytes: int


def _write(study: Study, last_id: int) -> _Written:
    """The study's events up to `last_id`, gzipped into a temporary file, then saved to the upload storage."""
    digest, count = hashlib.sha256(), 0
    with tempfile.TemporaryFile() as spool:
        with gzip.GzipFile(fileobj=spool, mode="wb", mtime=0) as zipped:
            for line in _lines(study, last_id):
                digest.update(line)
                zipped.write(line)
                count += 1
        size = spool.tell()
        spool.seek(0)
        stamp = timezone.now().astimezone(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        key = upload_storage().save(f"{ARCHIVE_FOLDER}/{study.slug}-{study.pk}-{stamp}.jsonl.gz", File(spool))
    return _Written(key=key, events=count, sha256=digest.hexdigest(), compressed_bytes=size)


def _read_back(key: str) -> tuple[int, str]:
    """(lines, sha256 of the uncompressed bytes) of the file as the storage gives it back."""
    digest, count = hashlib.sha256(), 0
    with upload_storage().open(key, "rb") as stored, gzip.GzipFile(fileobj=stored, mode="rb") as lines:
        for line in lines:
            digest.update(line)
            count += 1
    return count, digest.hexdigest()


def study_events_archive(*, study: Study, closed_before: datetime) -> EventArchive:
    """Archive the study's events, read the archive back and check it, then delete the rows it holds.
    Raises EventArchiveError (and deletes nothing) when the study is refused or any check fails; a file that
    failed its check is removed from the storage."""
    if refusal := archive_refusal(study, closed_before=closed_before):
        raise EventArchiveError(f"{study.slug}: not archived: {refusal}")
    last_id = Event.objects.filter(participant__study=study).aggregate(last=Max("id"))["last"]
    written = _write(study, last_id)
    try:
        count, sha256 = _read_back(written.key)
        if (count, sha256) != (written.events, written.sha256):
            raise EventArchiveError(
                f"{study.slug}: not archived: the storage gave back {count} events (sha256 {sha256[:12]}) "
                f"for {written.events} written (sha256 {written.sha256[:12]}); nothing was deleted"
            )
        return _rows_delete(study, written, last_id)
    except BaseException:
        upload_storage().delete(written.key)
        raise


def _rows_delete(study: Study, written: _Written, last_id: int) -> EventArchive:
    """In one transaction: serialise the rows again (they must be the archived ones), delete exactly them,
    record the archive and audit it."""
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        digest, count = hashlib.sha256(), 0
        for line in _lines(study, last_id):
            digest.update(line)
            count += 1
        if (count, digest.hexdigest()) != (written.events, written.sha256):
            raise EventArchiveError(
                f"{study.slug}: not archived: its events changed while they were archived ({written.events} "
                f"written, {count} now); nothing was deleted, try again"
            )
        rows = Event.objects.filter(participant__study=study, id__lte=last_id)
        span = rows.aggregate(first_id=Min("id"), first_time=Min("server_time"), last_time=Max("server_time"))
        deleted = rows.delete()[0]
        if deleted != written.events:
            raise EventArchiveError(f"{study.slug}: {deleted} rows to delete, {written.events} archived")
        archive = EventArchive.objects.create(
            study=study,
            key=written.key,
            events=written.events,
            sha256=written.sha256,
            compressed_bytes=written.compressed_bytes,
            first_event_id=span["first_id"],
            last_event_id=last_id,
            first_server_time=span["first_time"],
            last_server_time=span["last_time"],
            archived_at=timezone.now(),
        )
        AuditEntry.objects.create(
            study=study,
            action=AuditAction.EVENTS_ARCHIVED,
            detail={
                "archive": archive.pk,
                "key": written.key,
                "events": written.events,
                "sha256": written.sha256,
            },
        )
    return archive


def archived_events(archive: EventArchive) -> Iterator[dict]:
    """The archive's events as the storage holds them, one dict a line (the module's docstring: the keys)."""
    with (
        upload_storage().open(archive.key, "rb") as stored,
        gzip.GzipFile(fileobj=stored, mode="rb") as lines,
    ):
        for line in lines:
            yield json.loads(line)


def _restored_row(row: dict) -> tuple:
    def when(value):
        return None if value is None else datetime.fromisoformat(value)

    return (
        row["id"],
        row["participant_id"],
        row["session_id"],
        row["type"],
        row["client_event_id"],
        row["sequence"],
        when(row["client_time"]),
        when(row["server_time"]),
        row["payload"],
        row["origin"],
    )


def study_events_restore(*, archive: EventArchive) -> int:
    """Put the archive's events back in the log with their ids and times, after checking the file's count and
    sha256 against the record; the archive is kept (and marked restored). Returns the events restored."""
    if archive.restored_at is not None:
        raise EventArchiveError(f"archive {archive.key}: restored already on {archive.restored_at:%Y-%m-%d}")
    try:
        count, sha256 = _read_back(archive.key)
    except FileNotFoundError:
        raise EventArchiveError(f"archive {archive.key}: the file is not in the upload storage") from None
    if (count, sha256) != (archive.events, archive.sha256):
        raise EventArchiveError(
            f"archive {archive.key}: the file holds {count} events (sha256 {sha256[:12]}), the record says "
            f"{archive.events} ({archive.sha256[:12]}); nothing was restored"
        )
    with transaction.atomic():
        batch: list[tuple] = []
        for row in archived_events(archive):
            batch.append(_restored_row(row))
            if len(batch) >= ROWS_PER_READ:
                plain_sql.run_all(plain_sql.insert_statements(Event, _RESTORED, batch))
                batch = []
        plain_sql.run_all(plain_sql.insert_statements(Event, _RESTORED, batch))
        EventArchive.objects.filter(pk=archive.pk).update(restored_at=timezone.now())
        AuditEntry.objects.create(
            study=archive.study,
            action=AuditAction.EVENTS_RESTORED,
            detail={"archive": archive.pk, "key": archive.key, "events": count},
        )
    archive.refresh_from_db()
    return count
