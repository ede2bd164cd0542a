import io
import json
import uuid
import zipfile

import pytest
from django.utils import timezone

from studies.assessment.references import reference_version_import_qrels
from studies.design import services
from studies.models import Collection, Document, Query, ShownResult
from studies.participation.way.form_steps import consent_record, questionnaire_save, session_start
from tests.interchange.api_helpers import body, client_for


@pytest.fixture
def worked(designed_study, alice):
    study = designed_study
    collection = Collection.objects.create(name="c", owner=alice)
    Document.objects.bulk_create(
        Document(collection=collection, external_id=f"d{n}", text="wing") for n in (1, 2)
    )
    study.collection = collection
    study.save(update_fields=["collection"])
    participant = services.participants_enrol(study=study, count=2)[0]
    consent_record(participant=participant, consent_version="1", client_event_id=uuid.uuid4().hex)
    questionnaire_save(
        participant=participant,
        client_event_id=uuid.uuid4().hex,
        answers={"search_engine_years": 7, "domain_years": 21, "search_skill": 2},
    )
    session = session_start(
        participant=participant, assignment=participant.assignments.first(), client_event_id=uuid.uuid4().hex
    )
    query = Query.objects.create(session=session, position=1, text="wing", issued_at=timezone.now())
    for rank, doc in enumerate(("d1", "d2"), start=1):
        ShownResult.objects.create(
            query=query,
            rank=rank,
            document=collection.documents.get(external_id=doc),
            shown_at=timezone.now(),
        )
    reference_version_import_qrels(
        study=study, lines=["1 0 d1 2"], path="ref.qrels", created_by=alice, note="v1"
    )
    return study


def test_the_downloads_page_links_every_export(alice_client, worked):
    page = alice_client.get(f"/studies/{worked.slug}/downloads/").content.decode()
    for part in (
        "tables.zip",
        "archive.json",
        "runs-query.zip",
        "runs-session.zip",
        "reference-v1.qrels",
        "session-track.xml",
        "agreement.csv",
    ):
        assert f"/studies/{worked.slug}/downloads/{part}" in page
    assert f"/scoring/{worked.slug}/package.zip" in page  # the study package is scoring's (it holds scores)


def test_each_download_holds_its_export(alice_client, worked):
    base = f"/studies/{worked.slug}/downloads/"
    response = alice_client.get(base + "tables.zip")
    assert response["Content-Disposition"] == f'attachment; filename="{worked.slug}-tables.zip"'
    names = zipfile.ZipFile(io.BytesIO(body(response))).namelist()
    assert {"sessions.csv", "queries.csv", "shown_results.csv", "judgments.csv"} <= set(names)
    archive = json.loads(body(alice_client.get(base + "archive.json")))
    assert worked.name in json.dumps(archive) and "P001" in json.dumps(archive)
    runs = zipfile.ZipFile(io.BytesIO(body(alice_client.get(base + "runs-query.zip"))))
    (name,) = [n for n in runs.namelist() if n.endswith(".run")]  # and population.txt
    assert runs.read(name).decode().splitlines()[0].split()[:4] == ["1", "Q0", "d1", "1"]
    assert alice_client.get(base + "reference-v1.qrels").content.decode() == "1 0 d1 2\n"
    assert alice_client.get(base + "reference-v9.qrels").status_code == 404
    assert alice_client.get(base + "runs-bogus.zip").status_code == 400
    assert body(alice_client.get(base + "session-track.xml")).startswith(b"<?xml")
    assert body(alice_client.get(base + "agreement.csv")).startswith(b"scenario,first,second,coefficient,")


def test_another_researcher_gets_a_404(client, charlie, worked):
    client.force_login(charlie)
    for part in (
        "",
        "tables.zip",
        "archive.json",
        "runs-query.zip",
        "reference-v1.qrels",
        "session-track.xml",
        "agreement.csv",
    ):
        assert client.get(f"/studies/{worked.slug}/downloads/{part}").status_code == 404


def test_the_api_serves_the_same_files(alice, worked, alice_client):
    api = client_for(alice)
    base = f"/api/studies/{worked.pk}"
    page = f"/studies/{worked.slug}/downloads/"
    archive, downloaded = (
        json.loads(body(r)) for r in (api.get(f"{base}/archive/"), alice_client.get(page + "archive.json"))
    )
    archive.pop("exported_at", None), downloaded.pop("exported_at", None)
    assert archive == downloaded
    tables = api.get(f"{base}/tables/")
    assert tables["Content-Type"] == "application/zip"
    assert "sessions.csv" in zipfile.ZipFile(io.BytesIO(body(tables))).namelist()
    runs = api.get(f"{base}/runs/", {"unit": "session"})
    assert body(runs) == body(alice_client.get(page + "runs-session.zip"))
    assert api.get(f"{base}/runs/", {"unit": "bogus"}).status_code == 400
    assert api.get(f"{base}/runs/", {"units": "query"}).status_code == 400
    assert api.get(f"{base}/tables/", {"raw": "perhaps"}).status_code == 400


def test_the_api_exports_are_another_lab_s_404(charlie, worked):
    api = client_for(charlie)
    for part in ("archive", "tables", "runs"):
        assert api.get(f"/api/studies/{worked.pk}/{part}/").status_code == 404
