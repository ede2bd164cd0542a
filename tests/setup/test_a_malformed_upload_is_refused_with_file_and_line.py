"""Hostile or mistaken uploads: refused with the file (and the zip's member) and line, nothing imported."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from studies.library import services
from studies.models import Collection, CollectionUpload, Document

from .conftest import make_zip

GOOD = "\n".join(json.dumps({"id": f"d{n}", "title": f"Title {n}", "text": f"wing {n}"}) for n in range(1, 4))


def upload(client, captured, **files):
    data = {"name": files.pop("name", "Mine"), "format": files.pop("format", "jsonl")}
    data.update(
        {
            role: SimpleUploadedFile(name, content.encode() if isinstance(content, str) else content)
            for role, (name, content) in files.items()
        }
    )
    with captured(execute=True):
        response = client.post("/collections/upload/", data)
    return response


def test_a_bad_json_line_names_the_file_and_line(alice_client, django_capture_on_commit_callbacks):
    upload(
        alice_client,
        django_capture_on_commit_callbacks,
        documents=("docs.jsonl", GOOD + '\n{"id": "d9", "title": 3}\n'),
    )
    row = CollectionUpload.objects.get()
    assert row.status == "failed"
    assert row.error.startswith("docs.jsonl:4: "), row.error
    assert "/uploads/" not in row.error  # no server path
    assert not Collection.objects.exists() and not Document.objects.exists()


def test_a_member_of_a_zip_is_named(alice_client, django_capture_on_commit_callbacks):
    zipped = make_zip({"a.jsonl": GOOD, "b.jsonl": '{"id": "x1"}\nnot json\n'})
    upload(alice_client, django_capture_on_commit_callbacks, documents=("docs.zip", zipped))
    row = CollectionUpload.objects.get()
    assert row.status == "failed" and row.error.startswith("docs.zip › b.jsonl:2: not valid JSON"), row.error


def test_qrels_naming_an_unknown_document_name_their_line(alice_client, django_capture_on_commit_callbacks):
    upload(
        alice_client,
        django_capture_on_commit_callbacks,
        documents=("docs.jsonl", GOOD),
        qrels=("judged.qrels", "1 0 d1 2\n1 0 d404 1\n"),
    )
    row = CollectionUpload.objects.get()
    assert row.status == "failed" and row.error.startswith("judged.qrels:2: "), row.error
    assert not Collection.objects.exists()


@pytest.mark.parametrize("member", ["../escape.jsonl", "/etc/passwd.jsonl", "a/../../b.jsonl"])
def test_a_zip_member_outside_the_folder_is_refused(
    alice_client, django_capture_on_commit_callbacks, member, tmp_path
):
    zipped = make_zip({member: GOOD})
    upload(alice_client, django_capture_on_commit_callbacks, documents=("evil.zip", zipped))
    row = CollectionUpload.objects.get()
    assert row.status == "failed" and "outside the upload's folder" in row.error
    assert not (tmp_path / "escape.jsonl").exists()


def test_a_zip_bomb_stops_before_it_is_unpacked(
    alice_client, django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.setattr(services, "MAX_UNZIPPED_BYTES", 10_000)
    zipped = make_zip({"big.jsonl": GOOD + "\n" + " " * 20_000})
    upload(alice_client, django_capture_on_commit_callbacks, documents=("bomb.zip", zipped))
    row = CollectionUpload.objects.get()
    assert row.status == "failed" and "once unpacked" in row.error


def test_a_file_that_is_not_a_zip_is_named(alice_client, django_capture_on_commit_callbacks):
    upload(
        alice_client,
        django_capture_on_commit_callbacks,
        format="cranfield",
        documents=("cran.zip", "this is no zip"),
    )
    row = CollectionUpload.objects.get()
    assert row.status == "failed" and row.error == "cran.zip: not a zip file"


def test_a_cranfield_zip_without_its_files_is_named(alice_client, django_capture_on_commit_callbacks):
    upload(
        alice_client,
        django_capture_on_commit_callbacks,
        format="cranfield",
        documents=("cran.zip", make_zip({"readme.txt": "hello"})),
    )
    assert "no cran.all.1400" in CollectionUpload.objects.get().error


def test_refusals_before_the_upload_is_stored_are_a_400_with_the_reason(
    alice_client, django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.setattr(services, "MAX_UPLOAD_BYTES", 100)
    response = upload(alice_client, django_capture_on_commit_callbacks, documents=("docs.jsonl", GOOD * 3))
    assert response.status_code == 400
    assert "more than the" in " ".join(response.context["form"].errors["documents"])  # next to its field
    response = upload(
        alice_client, django_capture_on_commit_callbacks, format="cranfield", documents=("cran.all.1400", "x")
    )
    assert response.status_code == 400 and "uploaded as a zip" in response.content.decode()
    assert not CollectionUpload.objects.exists()


def test_a_name_already_taken_is_refused(alice_client, django_capture_on_commit_callbacks):
    Collection.objects.create(name="Mine")
    response = upload(alice_client, django_capture_on_commit_callbacks, documents=("docs.jsonl", GOOD))
    assert response.status_code == 400 and "already exists" in " ".join(
        response.context["form"].errors["name"]
    )


def test_trec_documents_with_topics_and_qrels_are_kept_with_the_collection(
    alice_client, django_capture_on_commit_callbacks
):
    docs = "".join(
        f"<DOC>\n<DOCNO>d{n}</DOCNO>\n<TITLE>Title {n}</TITLE>\n<TEXT>wing {n}</TEXT>\n</DOC>\n"
        for n in range(1, 4)
    )
    topics = (
        "<top>\n<num> Number: 301\n<title> Wing flutter\n<desc> Description:\nWhat makes wings flutter?\n"
        "<narr> Narrative:\nA relevant document explains it.\n</top>\n"
    )
    upload(
        alice_client,
        django_capture_on_commit_callbacks,
        format="trec",
        documents=("docs.trec", docs),
        topics=("topics.txt", topics),
        qrels=("q.qrels", "301 0 d1 2\n301 0 d2 0\n"),
    )
    row = CollectionUpload.objects.get()
    assert row.status == "done", row.error
    topic = row.collection.topics.get()
    assert (topic.topic_id, topic.title, topic.description, topic.narrative) == (
        "301",
        "Wing flutter",
        "What makes wings flutter?",
        "A relevant document explains it.",
    )
    assert sorted(row.collection.judgments.values_list("document__external_id", "grade")) == [
        ("d1", 2),
        ("d2", 0),
    ]


def test_an_id_longer_than_its_column_is_refused_by_name(alice_client, django_capture_on_commit_callbacks):
    upload(
        alice_client,
        django_capture_on_commit_callbacks,
        documents=("docs.jsonl", json.dumps({"id": "x" * 201, "text": "t"})),
    )
    row = CollectionUpload.objects.get()
    assert row.status == "failed" and "longer than 200 characters" in row.error


def test_a_bug_ends_the_upload_as_failed_not_stuck(
    alice_client, django_capture_on_commit_callbacks, monkeypatch
):
    def broken(**kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(services, "collection_parse", broken)
    upload(alice_client, django_capture_on_commit_callbacks, documents=("docs.jsonl", GOOD))
    row = CollectionUpload.objects.get()
    assert row.status == "failed" and "unexpected error" in row.error and "a bug" not in row.error


def test_an_unreachable_queue_ends_the_upload_saying_so(alice, tmp_path):
    from studies.library.services import upload_not_queued, upload_root

    row = CollectionUpload.objects.create(
        owner=alice, name="Mine", format="jsonl", files={"documents": "d.jsonl"}
    )
    (upload_root() / f"upload-{row.pk}").mkdir(parents=True)
    upload_not_queued(upload_id=row.pk)
    row.refresh_from_db()
    assert row.status == "failed" and "task queue could not be reached" in row.error
    assert not (upload_root() / f"upload-{row.pk}").exists()
