"""Retention of the event log (studies/retention.py, docs/deploying.md, "The event log"): the events of an
old, closed, scored study go to the upload storage, are read back and checked, and only then deleted; what is
refused changes nothing; the archive reads back and restores the very rows."""

import datetime as dt
import gzip
import json
import re
from io import StringIO

import pytest
from django.core.files.base import ContentFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone

from scoring.models import ScoringRun, SessionScore
from scoring.services import ScoringError, scoring_run_create, study_scores_mark_stale
from studies import retention
from studies.assessment import references
from studies.design.lifecycle import study_status_change
from studies.errors import EventArchiveError
from studies.library.storage import upload_storage
from studies.models import AuditAction, AuditEntry, Event, EventArchive, ReferenceVersion, Study
from tests.factories import study_scored

FIELDS = ("id", "participant_id", "session_id", "type", "client_event_id", "sequence", "client_time")
FIELDS += ("server_time", "payload", "origin")


@pytest.fixture(autouse=True)
def _storage(settings, tmp_path):
    settings.COLLECTION_UPLOAD_ROOT = tmp_path / "uploads"


def _rows(study):
    return list(Event.objects.filter(participant__study=study).order_by("id").values_list(*FIELDS))


def _closed(study, alice, days_ago=400):
    study_status_change(study=study, status="closed", by=alice)
    Study.objects.filter(pk=study.pk).update(status_changed_at=timezone.now() - dt.timedelta(days=days_ago))
    study.refresh_from_db()
    return study


def _with_reference(study, alice):
    lines = [f"{topic} 0 d{n} {(n + topic) % 4}" for topic in range(1, 5) for n in range(1, 9)]
    references.reference_version_import_qrels(study=study, lines=lines, path="ref.qrels", created_by=alice)
    return study


def _archive(*args):
    out = StringIO()
    call_command("archive_events", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def old_study(worked_study, alice, django_capture_on_commit_callbacks):
    """The worked study, scored (its default run done and fresh), closed 400 days ago."""
    study_scored(_with_reference(worked_study, alice), django_capture_on_commit_callbacks)
    return _closed(worked_study, alice)


def _scores_from_the_events(study, capture_on_commit):
    """A run whose figures need the events (observed depths, time-biased gain): its sessions' scores."""
    with capture_on_commit(execute=True):
        run = scoring_run_create(study=study, scan="observed", measures=["tbg"], make_default=False)
    run.refresh_from_db()
    assert run.status == ScoringRun.Status.DONE, run.error
    return sorted(SessionScore.objects.filter(run=run).values_list("session_id", "final", "measures"))


def test_archive_verify_delete_then_read_back_and_restore(
    old_study, alice, client, django_capture_on_commit_callbacks
):
    before = _rows(old_study)
    assert len(before) == 14
    scores = _scores_from_the_events(old_study, django_capture_on_commit_callbacks)
    assert any(measures["tbg"] for _, _, measures in scores)

    dry = _archive("--dry-run")
    assert f"{old_study.slug}: would archive 14 events" in dry
    assert _rows(old_study) == before and not EventArchive.objects.exists()

    said = _archive("--closed-days", "365")
    archive = EventArchive.objects.get()
    assert f"archived 14 events to {archive.key}" in said and "verified, deleted" in said
    assert _rows(old_study) == [] and archive.events == 14
    assert (archive.first_event_id, archive.last_event_id) == (before[0][0], before[-1][0])
    assert AuditEntry.objects.filter(study=old_study, action=AuditAction.EVENTS_ARCHIVED).count() == 1
    # The file is plain gzipped JSON Lines: any reader gets the rows back.
    with upload_storage().open(archive.key, "rb") as stored:
        lines = gzip.decompress(stored.read()).decode("utf-8").splitlines()
    assert [json.loads(line)["client_event_id"] for line in lines] == [row[4] for row in before]
    read = list(retention.archived_events(archive))
    assert [r["id"] for r in read] == [row[0] for row in before]
    assert [r["payload"] for r in read] == [row[8] for row in before]

    # The downloads say so: the files are written without the archived events.
    client.force_login(alice)
    downloads = reverse("exports:downloads", args=[old_study.slug])
    assert "14 events of this study were archived" in client.get(downloads).content.decode()
    # Scoring without the events would lose the time measures: refused until they are back.
    with pytest.raises(ScoringError, match="restore_events"):
        scoring_run_create(study=old_study)
    # A pass queued all the same (a withdrawal, a new reference version) fails the run and says why.
    with django_capture_on_commit_callbacks(execute=True):
        study_scores_mark_stale(study_id=old_study.pk)
    default = ScoringRun.objects.get(study=old_study, is_default=True)
    assert default.status == ScoringRun.Status.FAILED and "restore_events" in default.error

    call_command("restore_events", old_study.slug, stderr=StringIO())
    assert _rows(old_study) == before  # the same ids, times, payloads
    archive.refresh_from_db()
    assert archive.restored_at is not None
    assert "events-archived" not in client.get(downloads).content.decode()
    assert _scores_from_the_events(old_study, django_capture_on_commit_callbacks) == scores


def test_what_must_not_be_archived_is_refused_and_left_alone(
    worked_study, alice, django_capture_on_commit_callbacks
):
    before = _rows(worked_study)
    out = StringIO()
    with pytest.raises(CommandError, match="1 of the studies named were not archived"):
        call_command("archive_events", "--study", worked_study.slug, stdout=out)
    assert "kept (14 events): the study is open: only closed studies are archived" in out.getvalue()

    _closed(worked_study, alice, days_ago=10)
    with pytest.raises(EventArchiveError, match="after the cut-off"):
        retention.study_events_archive(
            study=worked_study, closed_before=timezone.now() - dt.timedelta(days=365)
        )
    # Every closed study is looked at; the refused ones are named with the reason, and nothing is deleted.
    assert "kept (14 events): not scored: the study has no default scoring run" in _archive(
        "--closed-days", "0"
    )
    assert _rows(worked_study) == before and not EventArchive.objects.exists()

    study_scored(_with_reference(worked_study, alice), django_capture_on_commit_callbacks)
    # A new reference version whose re-score has not run: the default run is stale (decided when read).
    ReferenceVersion.objects.create(study=worked_study, number=2, note="not yet scored")
    out = StringIO()
    with pytest.raises(CommandError, match="1 of the studies named were not archived"):
        call_command("archive_events", "--study", worked_study.slug, "--closed-days", "0", stdout=out)
    assert re.search(
        r"kept \(14 events\): not scored: its default run \(\d+\) is stale \(scored on reference v1, v2 is",
        out.getvalue(),
    )
    assert _rows(worked_study) == before and not EventArchive.objects.exists()


def test_an_archive_that_reads_back_wrong_deletes_nothing(old_study, monkeypatch, tmp_path):
    before = _rows(old_study)
    monkeypatch.setattr(retention, "_read_back", lambda key: (14, "0" * 64))
    with pytest.raises(EventArchiveError, match="the storage gave back 14 events"):
        retention.study_events_archive(study=old_study, closed_before=timezone.now())
    assert _rows(old_study) == before
    assert not EventArchive.objects.exists()
    assert not list((tmp_path / "uploads" / retention.ARCHIVE_FOLDER).iterdir())  # the bad file is removed


def test_rows_that_changed_after_the_write_are_not_deleted(old_study, monkeypatch):
    before = _rows(old_study)
    written = retention._write

    def write_then_withdraw_one(study, last_id):
        result = written(study, last_id)
        Event.objects.filter(pk=before[-1][0]).delete()  # as a withdrawal would, between write and delete
        return result

    monkeypatch.setattr(retention, "_write", write_then_withdraw_one)
    with pytest.raises(EventArchiveError, match="changed while they were archived"):
        retention.study_events_archive(study=old_study, closed_before=timezone.now())
    assert _rows(old_study) == before[:-1] and not EventArchive.objects.exists()


def test_a_tampered_archive_is_not_restored(old_study):
    _archive()
    archive = EventArchive.objects.get()
    storage = upload_storage()
    with storage.open(archive.key, "rb") as stored:
        lines = gzip.decompress(stored.read()).splitlines(keepends=True)
    storage.delete(archive.key)
    storage.save(archive.key, ContentFile(gzip.compress(b"".join(lines[:-1]))))
    with pytest.raises(CommandError, match="the file holds 13 events"):
        call_command("restore_events", old_study.slug, stderr=StringIO())
    assert _rows(old_study) == []
    archive.refresh_from_db()
    assert archive.restored_at is None


def test_the_printed_archive_is_the_log(old_study):
    before = _rows(old_study)
    _archive()
    out = StringIO()
    call_command("restore_events", old_study.slug, "--print", stdout=out)
    printed = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["id"], r["type"], r["participant"]) for r in printed] == [
        (row[0], row[3], "P001") for row in before
    ]
    assert _rows(old_study) == []  # printing restores nothing
