"""`study_archive_import`: an archive read a value at a time with line numbers (streamed_json), checked, and
written section by section in one transaction (design, participants, reference, in the order later sections
need earlier ones' rows, whatever the order of the archive's keys)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError, IntegrityError, connection, transaction

from studies.assessment.collection_reference import reference_version_from_collection
from studies.interchange import ImportFailure
from studies.interchange.archive.import_design import (
    documents_imported,
    grade_scale_imported,
    scenarios_imported,
    study_imported,
    systems_imported,
)
from studies.interchange.archive.import_participants import participants_imported
from studies.interchange.archive.import_reference import (
    assessment_imported,
    audit_imported,
    reference_versions_imported,
)
from studies.interchange.archive.participant_state import recruitment_imported
from studies.interchange.archive.reader import ArchiveReader, Imported
from studies.interchange.archive.streamed_json import archive_opened
from studies.models import AuditEntry, Event, Participant, PoolDocument, ReferenceVersion, Study


@contextmanager
def stored_timestamps():
    """Let the import write the archive's creation times into auto_now_add fields (the event log refuses
    UPDATE, so they cannot be fixed afterwards). Process-wide while it lasts: commands and tests only."""
    fields = [
        Study._meta.get_field("created_at"),
        Participant._meta.get_field("created_at"),
        Event._meta.get_field("server_time"),
        ReferenceVersion._meta.get_field("created_at"),
        AuditEntry._meta.get_field("at"),
        PoolDocument._meta.get_field("added_at"),
    ]
    for f in fields:
        f.auto_now_add = False
    try:
        yield
    finally:
        for f in fields:
            f.auto_now_add = True


@contextmanager
def _no_statement_texts_kept():
    """psycopg with a prepare threshold (settings.py, DB_PREPARED_STATEMENTS) keeps the text of the last 100
    statements its connection ran to count them, values inlined (the ORM binds on the client): 100 batches
    of documents, a few MiB each, held on past the import. Off while it runs (no ORM statement is ever
    prepared anyway)."""
    if connection.vendor != "postgresql":
        yield
        return
    connection.ensure_connection()
    raw = connection.connection
    threshold = raw.prepare_threshold
    raw.prepare_threshold = None
    try:
        yield
    finally:
        raw.prepare_threshold = threshold


def study_archive_import(*, path: str | Path, owner, name: str | None = None) -> Study:
    """Import the archive at `path` as a new study owned by `owner` (all or nothing). The file is copied in
    chunks to a temporary one within ARCHIVE_MAX_BYTES, then read a value at a time (streamed_json): memory
    follows the largest item (a document, a participant's sessions), not the archive."""
    path = str(path)
    with archive_opened(
        path, limit=settings.ARCHIVE_MAX_BYTES, max_string_bytes=settings.ARCHIVE_MAX_DOCUMENT_BYTES
    ) as archive:
        try:
            with transaction.atomic(), _no_statement_texts_kept():
                data = archive.root()
                with stored_timestamps():
                    study = _import(data, path, owner, name)
                if not study.reference_versions.exists():
                    # An archive with no reference (of a study made when the New-study form did not yet take
                    # the collection's judgments): the collection's judgments become its first version, as
                    # for any study built on it (made now, after the archive's stored times).
                    reference_version_from_collection(study=study, by=owner)
                return study
        except ImportFailure:
            raise
        except (IntegrityError, DatabaseError) as error:
            raise ImportFailure(path, None, None, f"the database refused the archive: {error}") from None


def _import(data, path: str, owner, name: str | None) -> Study:
    r = ArchiveReader(path)
    study, info = study_imported(r, data, owner, name)
    scale = grade_scale_imported(r, data, study)
    documents, old_document_ids = documents_imported(r, data, info, study, owner)
    done = Imported(r=r, study=study, scale=scale, documents=documents)
    done.scenarios = scenarios_imported(r, data, study)
    done.systems = systems_imported(r, data, study)
    for old, external_id in old_document_ids.items():
        done.old_ids["document"][old] = documents[external_id]
    recruitment_imported(r, data, study)
    participants_imported(done, data)
    reference_versions_imported(done, data)
    assessment_imported(done, data)
    audit_imported(done, data)
    study.import_notes = r.notes  # type: ignore[attr-defined]  # not a field: the command prints them
    return study
