"""With UPLOAD_STORAGE_URL=s3://..., a browser upload saved by a web node is imported by a worker whose own
upload folder is another, empty one (another host), and the stored objects are gone afterwards, whether the
import succeeded or failed. Before, the worker looked for the file on its own disk: "an unexpected error",
and the file stayed on the web node for ever. The S3 server is moto's, on 127.0.0.1."""

import json
import socket

import boto3
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.files.uploadedfile import SimpleUploadedFile
from moto.server import ThreadedMotoServer

from sessionlab.settings import _upload_storage
from studies.library.tasks import collection_upload_process_task
from studies.models import Collection, CollectionUpload, Document

from .conftest import make_zip

KEYS = {"access_key": "testing", "secret_key": "testing"}
TREC_DOCS = "".join(
    f"<DOC>\n<DOCNO>d{n}</DOCNO>\n<TITLE>Title {n}</TITLE>\n<TEXT>wing {n}</TEXT>\n</DOC>\n"
    for n in range(1, 4)
)
TOPICS = "<top>\n<num> Number: 301\n<title> Wing flutter\n<desc> Description:\nWhy?\n</top>\n"
GOOD = "\n".join(json.dumps({"id": f"d{n}", "title": f"Title {n}", "text": f"wing {n}"}) for n in range(1, 4))


@pytest.fixture(scope="module")
def s3_endpoint():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def bucket(s3_endpoint, settings, request, monkeypatch):
    """A new bucket per test, the uploads' storage set to it through UPLOAD_STORAGE_URL's reading."""
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    name = f"uploads-{request.node.name.replace('_', '-')[:40].lower()}"
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1", **_boto_keys())
    client.create_bucket(Bucket=name)
    entry = _upload_storage(f"s3://{name}/sessionlab?endpoint_url={s3_endpoint}&region_name=us-east-1")
    entry["OPTIONS"].update(KEYS)
    settings.STORAGES = {**settings.STORAGES, "collection_uploads": entry}
    return client, name


def _boto_keys():
    return {"aws_access_key_id": KEYS["access_key"], "aws_secret_access_key": KEYS["secret_key"]}


def _stored(bucket) -> list[str]:
    client, name = bucket
    return [item["Key"] for item in client.list_objects_v2(Bucket=name).get("Contents", [])]


def _files(folder) -> list:
    return [path for path in folder.rglob("*") if path.is_file()] if folder.exists() else []


def _post_on_the_web_node(client, settings, tmp_path, captured, data):
    """The web node: its own upload folder; the task is queued, not run here."""
    settings.COLLECTION_UPLOAD_ROOT = tmp_path / "web"
    with captured(execute=False):
        response = client.post("/collections/upload/", data)
    return response


def _run_on_the_worker(settings, tmp_path, upload_id) -> CollectionUpload:
    settings.COLLECTION_UPLOAD_ROOT = tmp_path / "worker"
    collection_upload_process_task(upload_id)
    return CollectionUpload.objects.get(pk=upload_id)


def test_the_worker_imports_what_the_web_node_stored_and_removes_it(
    alice_client, settings, tmp_path, django_capture_on_commit_callbacks, bucket
):
    data = {
        "name": "Wings",
        "format": "trec",
        "documents": SimpleUploadedFile("docs.trec", TREC_DOCS.encode()),
        "topics": SimpleUploadedFile("topics.txt", TOPICS.encode()),
        "qrels": SimpleUploadedFile("q.qrels", b"301 0 d1 2\n301 0 d2 0\n"),
    }
    response = _post_on_the_web_node(
        alice_client, settings, tmp_path, django_capture_on_commit_callbacks, data
    )
    upload = CollectionUpload.objects.get()
    assert response.status_code == 302 and upload.status == "queued"
    assert sorted(_stored(bucket)) == [
        f"sessionlab/upload-{upload.pk}/documents/docs.trec",
        f"sessionlab/upload-{upload.pk}/qrels/q.qrels",
        f"sessionlab/upload-{upload.pk}/topics/topics.txt",
    ]
    assert _files(tmp_path / "web") == []  # nothing on the web node's disk

    row = _run_on_the_worker(settings, tmp_path, upload.pk)
    assert row.status == "done", row.error
    assert row.collection.documents.count() == 3 and row.collection.judgments.count() == 2
    assert _stored(bucket) == [] and _files(tmp_path / "worker") == []


def test_a_refused_upload_leaves_no_stored_objects(
    alice_client, settings, tmp_path, django_capture_on_commit_callbacks, bucket
):
    bad = GOOD + '\n{"id": "d9", "title": 3}\n'
    data = {"name": "Bad", "format": "jsonl", "documents": SimpleUploadedFile("docs.jsonl", bad.encode())}
    _post_on_the_web_node(alice_client, settings, tmp_path, django_capture_on_commit_callbacks, data)
    assert len(_stored(bucket)) == 1
    row = _run_on_the_worker(settings, tmp_path, CollectionUpload.objects.get().pk)
    assert row.status == "failed" and row.error.startswith("docs.jsonl:4: "), row.error
    assert "worker" not in row.error and "sessionlab/" not in row.error  # no path of a node or the store
    assert not Collection.objects.exists() and not Document.objects.exists()
    assert _stored(bucket) == [] and _files(tmp_path / "worker") == []


def test_a_zip_member_escaping_its_folder_is_named_and_nothing_is_left(
    alice_client, settings, tmp_path, django_capture_on_commit_callbacks, bucket
):
    archive = make_zip({"../../escape.jsonl": GOOD})
    data = {"name": "Zip", "format": "jsonl", "documents": SimpleUploadedFile("docs.zip", archive)}
    _post_on_the_web_node(alice_client, settings, tmp_path, django_capture_on_commit_callbacks, data)
    row = _run_on_the_worker(settings, tmp_path, CollectionUpload.objects.get().pk)
    assert row.status == "failed" and row.error.startswith("docs.zip: member "), row.error
    assert (
        _stored(bucket) == []
        and _files(tmp_path / "worker") == []
        and not (tmp_path / "escape.jsonl").exists()
    )


def test_a_stored_upload_that_vanished_fails_naming_the_fetch(
    alice_client, settings, tmp_path, django_capture_on_commit_callbacks, bucket
):
    data = {"name": "Gone", "format": "jsonl", "documents": SimpleUploadedFile("docs.jsonl", GOOD.encode())}
    _post_on_the_web_node(alice_client, settings, tmp_path, django_capture_on_commit_callbacks, data)
    client, name = bucket
    for key in _stored(bucket):
        client.delete_object(Bucket=name, Key=key)
    row = _run_on_the_worker(settings, tmp_path, CollectionUpload.objects.get().pk)
    assert row.status == "failed" and "could not be fetched from the upload storage" in row.error, row.error
    assert "unexpected" not in row.error and _files(tmp_path / "worker") == []


def test_a_store_refusing_the_save_refuses_the_form_and_keeps_nothing(
    alice_client, settings, tmp_path, django_capture_on_commit_callbacks, bucket
):
    client, name = bucket
    options = settings.STORAGES["collection_uploads"]["OPTIONS"]
    settings.STORAGES = {
        **settings.STORAGES,
        "collection_uploads": {
            **settings.STORAGES["collection_uploads"],
            "OPTIONS": {**options, "bucket_name": "none"},
        },
    }
    data = {"name": "Lost", "format": "jsonl", "documents": SimpleUploadedFile("docs.jsonl", GOOD.encode())}
    response = _post_on_the_web_node(
        alice_client, settings, tmp_path, django_capture_on_commit_callbacks, data
    )
    assert response.status_code == 400
    assert "could not be saved to the upload storage" in response.content.decode()
    assert not CollectionUpload.objects.exists() and _stored(bucket) == []


@pytest.mark.parametrize(
    "url, words",
    [
        ("https://bucket/prefix", "must look like s3://bucket/prefix"),
        ("s3:///prefix", "must look like s3://bucket/prefix"),
        ("s3://bucket/prefix?access_key=secret", "unknown option 'access_key'"),
    ],
)
def test_a_wrong_upload_storage_url_stops_the_start_naming_the_fault(url, words):
    with pytest.raises(ImproperlyConfigured, match=words):
        _upload_storage(url)


def test_the_upload_storage_url_reads_bucket_prefix_and_options():
    entry = _upload_storage("s3://shared/sl/uploads/?endpoint_url=http://minio:9000&region_name=eu-west-1")
    assert entry["BACKEND"] == "storages.backends.s3.S3Storage"
    assert entry["OPTIONS"] == {
        "bucket_name": "shared",
        "location": "sl/uploads",
        "default_acl": None,
        "endpoint_url": "http://minio:9000",
        "region_name": "eu-west-1",
    }
