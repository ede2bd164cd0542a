"""Collections have an owner and are shared explicitly: a researcher builds studies only on the
collections they may use (own, shared with them, or those of studies they research on; superusers all), by
the API, the page's form, the service, the admin and every importer. Another lab's collection id reads like an
id that does not exist."""

import json

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from studies.design import services
from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive_import
from studies.interchange.session_track import session_track_import
from studies.models import Collection, Document, Study

from ..samples import SESSION_TRACK_XML

pytestmark = pytest.mark.django_db


@pytest.fixture
def alices_collection(alice):
    collection = Collection.objects.create(name="Alice's lab collection", owner=alice)
    Document.objects.bulk_create(
        Document(collection=collection, external_id=f"secret-{n}", text=f"Secret {n}") for n in range(1, 4)
    )
    return collection


def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_api_refuses_another_labs_collection_as_if_it_did_not_exist(alices_collection, charlie):
    before = Study.objects.count()
    theirs = api(charlie).post(
        "/api/studies/", {"name": "Mine", "collection": alices_collection.pk}, format="json"
    )
    unknown = api(charlie).post("/api/studies/", {"name": "Mine", "collection": 999_999}, format="json")
    assert theirs.status_code == unknown.status_code == 400
    assert theirs.json()["collection"][0].replace(str(alices_collection.pk), "N") == unknown.json()[
        "collection"
    ][0].replace("999999", "N")
    assert Study.objects.count() == before


def test_the_owner_and_a_researcher_it_is_shared_with_may_build_on_it(alices_collection, alice, charlie):
    mine = api(alice).post(
        "/api/studies/", {"name": "Alice's", "collection": alices_collection.pk}, format="json"
    )
    assert mine.status_code == 201 and mine.json()["collection"] == alices_collection.pk
    assert services.collection_share(collection=alices_collection, user=charlie, by=alice)
    shared = api(charlie).post(
        "/api/studies/", {"name": "Charlie's", "collection": alices_collection.pk}, format="json"
    )
    assert shared.status_code == 201
    assert services.collection_unshare(collection=alices_collection, user=charlie, by=alice)
    # Unshared: his study built on it keeps it, and so (through that study) he keeps using it.
    assert Study.objects.get(pk=shared.json()["id"]).collection == alices_collection


def test_unsharing_stops_new_studies_of_a_researcher_without_one(alices_collection, alice, charlie):
    services.collection_share(collection=alices_collection, user=charlie, by=alice)
    services.collection_unshare(collection=alices_collection, user=charlie, by=alice)
    response = api(charlie).post(
        "/api/studies/", {"name": "x", "collection": alices_collection.pk}, format="json"
    )
    assert response.status_code == 400 and "collection" in response.json()


def test_the_service_refuses_another_labs_collection(alices_collection, charlie):
    with pytest.raises(services.CollectionAccessError) as refusal:
        services.study_create(owner=charlie, name="Mine", collection=alices_collection)
    assert "Alice" not in str(refusal.value) and not Study.objects.filter(name="Mine").exists()


def test_the_study_form_offers_and_accepts_only_usable_collections(client, alices_collection, alice, charlie):
    theirs_too = Collection.objects.create(name="Charlie's own", owner=charlie)
    client.force_login(charlie)
    page = client.get("/studies/new/").content.decode()
    assert "Charlie&#x27;s own" in page and "Alice&#x27;s lab collection" not in page
    form = {"name": "Built", "grade_labels": "no\nyes", "consent_version": "1"}
    response = client.post("/studies/new/", {**form, "collection": alices_collection.pk})
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert not Study.objects.filter(name="Built").exists()
    client.post("/studies/new/", {**form, "collection": theirs_too.pk})
    assert Study.objects.get(name="Built").collection == theirs_too


def test_the_admin_refuses_a_collection_the_studys_owner_may_not_use(
    admin_client, alices_collection, charlie
):
    study = services.study_create(owner=charlie, name="Charlie's study")
    response = admin_client.post(
        f"/admin/studies/study/{study.pk}/change/",
        {
            "name": study.name,
            "slug": study.slug,
            "owner": charlie.pk,
            "researchers": [charlie.pk],
            "collection": alices_collection.pk,
            "consent_version": "1",
            "questionnaire": "[]",
            "post_task_questionnaire": "[]",
            **{
                f"{prefix}-{key}": "0"
                for prefix in ("grade_levels", "scenarios", "systems")
                for key in ("TOTAL_FORMS", "INITIAL_FORMS")
            },
        },
    )
    assert response.status_code == 200 and "may not use this collection" in response.content.decode()
    study.refresh_from_db()
    assert study.collection is None


def test_the_admin_shares_through_the_service(
    admin_client, alices_collection, alice, charlie, django_user_model
):
    assessor = django_user_model.objects.create_user("ann", password="x")
    data = {"name": alices_collection.name, "description": "", "owner": alice.pk, "shared_with": [charlie.pk]}
    admin_client.post(f"/admin/studies/collection/{alices_collection.pk}/change/", data)
    assert list(alices_collection.shared_with.all()) == [charlie]
    # Only researcher accounts are offered (an assessor's id is not a valid choice).
    response = admin_client.post(
        f"/admin/studies/collection/{alices_collection.pk}/change/", {**data, "shared_with": [assessor.pk]}
    )
    assert response.status_code == 200 and list(alices_collection.shared_with.all()) == [charlie]


def test_an_archive_naming_another_labs_collection_is_refused(alices_collection, alice, charlie, tmp_path):
    study = services.study_create(owner=alice, name="Alice's", collection=alices_collection)
    path = tmp_path / "study.json"
    call_command("export_study", study.slug, "-o", str(path))
    data = json.loads(path.read_text())
    data["documents"] = [
        {"collection": alices_collection.name, "external_id": "secret-1", "title": "", "text": ""}
    ]
    path.write_text(json.dumps(data, indent=1))
    before = (Study.objects.count(), Collection.objects.count(), Document.objects.count())
    with pytest.raises(ImportFailure) as failure:
        study_archive_import(path=path, owner=charlie)
    assert str(failure.value).startswith(f"{path}:") and "$.documents[0].collection" in str(failure.value)
    assert (Study.objects.count(), Collection.objects.count(), Document.objects.count()) == before
    # Alice herself imports it onto her own collection.
    assert study_archive_import(path=path, owner=alice).collection == alices_collection


def test_an_archive_with_a_new_collection_makes_it_the_importers(alice, charlie, tmp_path):
    study = services.study_create(owner=alice, name="No collection")
    path = tmp_path / "study.json"
    call_command("export_study", study.slug, "-o", str(path))
    data = json.loads(path.read_text())
    data["study"]["collection"] = "Brand new"
    path.write_text(json.dumps(data))
    copy = study_archive_import(path=path, owner=charlie)
    assert copy.collection.name == "Brand new" and copy.collection.owner == charlie


def test_a_session_track_import_cannot_reuse_another_labs_collection(alice, charlie, tmp_path):
    Collection.objects.create(name="ClueWeb09", owner=alice)
    log = tmp_path / "log.xml"
    log.write_text(SESSION_TRACK_XML)
    with pytest.raises(ImportFailure, match="not shared with 'charlie'"):
        session_track_import(path=log, owner=charlie, name="x")
    assert not Study.objects.filter(name="x").exists()
    summary = session_track_import(path=log, owner=alice, name="y")
    assert summary.study.collection.owner == alice
