"""With UPLOAD_STORAGE_URL unset (one machine), an upload waits in a FileSystemStorage under the upload root,
and once its task ends, imported or refused, neither its stored files nor the worker's private copy nor their
folders are left there."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from studies.library.storage import UPLOAD_STORAGE_ALIAS, upload_root, upload_storage
from studies.models import CollectionUpload

GOOD = "\n".join(json.dumps({"id": f"d{n}", "title": f"Title {n}", "text": f"wing {n}"}) for n in range(1, 4))


def test_the_default_storage_is_a_folder_under_the_upload_root(settings):
    assert UPLOAD_STORAGE_ALIAS not in settings.STORAGES
    assert upload_storage().path("upload-1/documents/d.jsonl") == str(
        upload_root() / "upload-1/documents/d.jsonl"
    )


@pytest.mark.parametrize("content, status", [(GOOD, "done"), (GOOD + "\nnot json\n", "failed")])
def test_nothing_is_left_in_the_upload_folder(
    alice_client, django_capture_on_commit_callbacks, content, status
):
    with django_capture_on_commit_callbacks(execute=False) as queued:
        alice_client.post(
            "/collections/upload/",
            {
                "name": "Mine",
                "format": "jsonl",
                "documents": SimpleUploadedFile("docs.jsonl", content.encode()),
            },
        )
    upload = CollectionUpload.objects.get()
    assert (upload_root() / f"upload-{upload.pk}" / "documents" / "docs.jsonl").read_text() == content
    for callback in queued:
        callback()
    upload.refresh_from_db()
    assert upload.status == status, upload.error
    assert list(upload_root().iterdir()) == []
