from django.core.files.uploadedfile import SimpleUploadedFile

from studies.models import Collection, CollectionUpload


def test_a_cranfield_zip_is_imported_and_indexed_with_its_progress_stored(
    alice_client, alice, cranfield_zip, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(
            "/collections/upload/",
            {
                "name": "Cranfield",
                "format": "cranfield",
                "documents": SimpleUploadedFile("cranfield.zip", cranfield_zip, "application/zip"),
            },
        )
    upload = CollectionUpload.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/collections/uploads/{upload.pk}/"
    assert upload.status == "done" and upload.progress == 100, upload.error
    collection = Collection.objects.get(name="Cranfield")
    assert collection.owner == alice and upload.collection == collection
    assert collection.documents.count() == 1400
    assert collection.topics.count() == 225
    assert collection.judgments.count() > 1800
    state = alice_client.get(f"/collections/uploads/{upload.pk}/status.json").json()
    assert state["finished"] and state["progress"] == 100
    assert state["collection_url"] == f"/collections/{collection.pk}/"
    page = alice_client.get(f"/collections/{collection.pk}/").content.decode()
    assert "1400 documents" in page and "not built" not in page  # every configuration indexed


def test_the_progress_page_reads_the_stored_row(alice_client, alice):
    upload = CollectionUpload.objects.create(
        owner=alice,
        name="Half way",
        format="jsonl",
        status="indexing",
        progress=70,
        stage="Building the index bm25_text (2 of 2)",
    )
    page = alice_client.get(f"/collections/uploads/{upload.pk}/").content.decode()
    assert 'value="70"' in page and "Building the index bm25_text" in page
    state = alice_client.get(f"/collections/uploads/{upload.pk}/status.json").json()
    assert state == {
        "status": "indexing",
        "label": "Building the search indexes",
        "progress": 70,
        "stage": "Building the index bm25_text (2 of 2)",
        "error": "",
        "finished": False,
        "collection_url": None,
    }


def test_another_researcher_cannot_follow_an_upload(client, alice, charlie):
    upload = CollectionUpload.objects.create(owner=alice, name="Mine", format="jsonl")
    client.force_login(charlie)
    assert client.get(f"/collections/uploads/{upload.pk}/status.json").status_code == 404
