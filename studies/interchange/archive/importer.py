"""`study_archive_import`: an archive read with line numbers, checked, and written section by section in one
transaction (design, participants, reference, in the order later sections need earlier ones' rows)."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction

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
from studies.interchange.archive.lined_json import load_json_with_lines, refuse_unstorable_text
from studies.interchange.archive.participant_state import recruitment_imported
from studies.interchange.archive.reader import ArchiveReader, Imported
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


def study_archive_import(*, path: str | Path, owner, name: str | None = None) -> Study:
    """Import the archive at `path` as a new study owned by `owner` (all or nothing)."""
    path = str(path)
    text = _archive_text(path)
    data = load_json_with_lines(text, path, max_string_bytes=settings.ARCHIVE_MAX_DOCUMENT_BYTES)
    refuse_unstorable_text(data, path)
    try:
        with transaction.atomic():
            with stored_timestamps():
                study = _import(data, path, owner, name)
            if not study.reference_versions.exists():
                # An archive with no reference (one of a study made before issue 37): the collection's
                # judgments become its first version, as for any study built on it (made now, after the
                # archive's stored times).
                reference_version_from_collection(study=study, by=owner)
            return study
    except ImportFailure:
        raise
    except (IntegrityError, DatabaseError) as error:
        raise ImportFailure(path, None, None, f"the database refused the archive: {error}") from None


def _archive_text(path: str) -> str:
    """The archive's text, refused past ARCHIVE_MAX_BYTES by its size on disk before anything is read, and
    again while it is read (a file that grows, or a pipe, never holds more than the cap in memory)."""
    limit = settings.ARCHIVE_MAX_BYTES
    too_big = f"the archive is over ARCHIVE_MAX_BYTES ({limit} bytes)"
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size > limit:
                raise ImportFailure(path, None, None, f"{too_big}: it has {size} bytes")
            raw = file.read(limit + 1)
    except OSError as error:
        raise ImportFailure(path, None, None, f"cannot read: {error.strerror}") from None
    if len(raw) > limit:
        raise ImportFailure(path, None, None, too_big)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ImportFailure(path, None, None, "not UTF-8 text") from None


def _import(data, path: str, owner, name: str | None) -> Study:
    r = ArchiveReader(path)
    study, info = study_imported(r, data, owner, name)
    scale = grade_scale_imported(r, data, study)
    documents, old_document_ids = documents_imported(r, data, info, study, owner)
    done = Imported(r=r, study=study, scale=scale, documents=documents)
    done.scenarios = scenarios_imported(r, data, study)
    done.systems = systems_imported(r, data, study)
    for old, external_id in old_document_ids.items():
        done.old_ids["document"][old] = documents[external_id].pk
    recruitment_imported(r, data, study)
    participants_imported(done, data)
    reference_versions_imported(done, data)
    assessment_imported(done, data)
    audit_imported(done, data)
    study.import_notes = r.notes  # type: ignore[attr-defined]  # not a field: the command prints them
    return study
