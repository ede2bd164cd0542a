"""A worker killed mid-upload left the upload "reading" (or storing, or indexing) for ever, its files in the
upload storage: a redelivered task finds the upload claimed and does nothing. Now an upload whose progress has
not moved for UPLOAD_STALE_MINUTES is failed by the beat's sweep (or its own page), with a reason the
researcher reads, and its stored files are deleted; a fresh one is untouched, and a second sweep changes
nothing (studies/library/sweep.py)."""

import json
import threading
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, connections, transaction
from django.utils import timezone

from studies.library import services
from studies.library.storage import upload_root
from studies.library.sweep import uploads_stale_fail
from studies.library.tasks import stale_uploads_fail_task
from studies.models import Collection, CollectionUpload

pytestmark = pytest.mark.django_db
GOOD = "\n".join(json.dumps({"id": f"d{n}", "title": f"Title {n}", "text": f"wing {n}"}) for n in range(1, 4))


@pytest.fixture(autouse=True)
def _an_hour(settings):
    settings.UPLOAD_STALE_MINUTES = 60


def _stored(alice, name: str, status: str, minutes_ago: float) -> CollectionUpload:
    """An upload whose files are stored, left in `status` with its last progress `minutes_ago`."""
    upload = services.upload_create(
        owner=alice,
        name=name,
        format="jsonl",
        files={"documents": SimpleUploadedFile("docs.jsonl", GOOD.encode())},
    )
    CollectionUpload.objects.filter(pk=upload.pk).update(
        status=status, updated_at=timezone.now() - timedelta(minutes=minutes_ago)
    )
    return upload


def _files_of(upload) -> list:
    folder = upload_root() / f"upload-{upload.pk}"
    return sorted(p.name for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_a_stale_upload_fails_and_its_files_go_while_a_fresh_one_is_untouched(alice):
    stale = _stored(alice, "Stale", "reading", minutes_ago=61)
    fresh = _stored(alice, "Fresh", "reading", minutes_ago=10)
    assert _files_of(stale) == _files_of(fresh) == ["docs.jsonl"]

    assert stale_uploads_fail_task.delay().get() == [stale.pk]

    stale.refresh_from_db()
    assert stale.status == "failed" and stale.progress == 100
    assert stale.error.startswith("The worker stopped while reading and checking the files")
    assert "Upload the files again" in stale.error and "60 minutes" in stale.error
    assert _files_of(stale) == []
    fresh.refresh_from_db()
    assert fresh.status == "reading" and fresh.error == ""
    assert _files_of(fresh) == ["docs.jsonl"]


def test_a_second_sweep_changes_nothing(alice):
    stale = _stored(alice, "Stale", "writing", minutes_ago=90)
    assert uploads_stale_fail() == [stale.pk]
    stale.refresh_from_db()
    failed_at, error = stale.updated_at, stale.error
    assert "while storing the documents" in error
    assert uploads_stale_fail() == []
    assert uploads_stale_fail(now=timezone.now() + timedelta(days=1)) == []  # failed is finished
    stale.refresh_from_db()
    assert (stale.status, stale.updated_at, stale.error) == ("failed", failed_at, error)


@pytest.mark.parametrize(
    "status, says",
    [
        ("queued", "No worker started this upload within 60 minutes"),
        ("indexing", "The documents are stored as the collection \u201cStale\u201d"),
    ],
)
def test_the_reason_names_where_it_stopped(alice, status, says):
    stale = _stored(alice, "Stale", status, minutes_ago=61)
    uploads_stale_fail()
    stale.refresh_from_db()
    assert stale.status == "failed" and says in stale.error


def test_finished_uploads_are_never_touched(alice):
    done = _stored(alice, "Done", "done", minutes_ago=600)
    assert uploads_stale_fail() == []
    done.refresh_from_db()
    assert done.status == "done"


def test_the_upload_page_says_so_without_a_beat(alice, client):
    stale = _stored(alice, "Stale", "indexing", minutes_ago=61)
    client.force_login(alice)
    state = client.get(f"/collections/uploads/{stale.pk}/status.json").json()
    assert state["status"] == "failed" and state["finished"]
    assert "while building the search indexes" in state["error"]
    assert _files_of(stale) == []


def test_progress_reports_keep_an_upload_fresh(alice):
    upload = _stored(alice, "Slow", "queued", minutes_ago=61)
    CollectionUpload.objects.filter(pk=upload.pk).update(status="queued")
    services._report(upload.pk, "reading", 10, "Reading")  # what the worker writes as it goes
    assert uploads_stale_fail() == []
    upload.refresh_from_db()
    assert upload.status == "reading"


def test_a_worker_the_sweep_gave_up_on_cannot_turn_the_failure_back(alice):
    """A slow worker (not dead) reports after the sweep failed its upload: the failure stands, and it writes
    no collection behind the researcher's back."""
    upload = _stored(alice, "Slow", "writing", minutes_ago=61)
    uploads_stale_fail()
    services._report(upload.pk, "indexing", 60, "Building the search indexes")
    upload.refresh_from_db()
    assert upload.status == "failed"
    with pytest.raises(services.CollectionImportError, match="ended while it waited"):
        services._collection_written(upload, parsed=None)
    assert not Collection.objects.filter(name="Slow").exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL (CI's second pass)")
def test_an_upload_a_worker_holds_locked_is_skipped_not_waited_for(alice):
    """A worker storing a large collection holds the upload's row locked for minutes; the sweep passes it by
    at once (it is alive, and stamps the row when it commits) instead of blocking a worker slot."""
    upload = _stored(alice, "Busy", "writing", minutes_ago=61)
    locked, release = threading.Event(), threading.Event()

    def storing():
        try:
            with transaction.atomic():
                list(CollectionUpload.objects.select_for_update().filter(pk=upload.pk))
                locked.set()
                release.wait(10)
        finally:
            connections.close_all()

    worker = threading.Thread(target=storing)
    worker.start()
    assert locked.wait(10)
    try:
        assert uploads_stale_fail() == []
    finally:
        release.set()
        worker.join(10)
    upload.refresh_from_db()
    assert upload.status == "writing" and _files_of(upload) == ["docs.jsonl"]
    assert uploads_stale_fail() == [upload.pk]  # unlocked and still unmoved: its worker is gone
