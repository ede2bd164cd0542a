"""/api/collections/: the collections a researcher may build studies on, and their owner's sharing of them
(docs/api.md)."""

import pytest
from rest_framework.test import APIClient

from studies.models import Collection, Document

pytestmark = pytest.mark.django_db


def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def alices(alice):
    collection = Collection.objects.create(name="Alice's", owner=alice)
    Document.objects.bulk_create(Document(collection=collection, external_id=f"d{n}") for n in range(3))
    return collection


def test_a_researcher_lists_only_the_collections_they_may_use(alices, alice, charlie):
    Collection.objects.create(name="Charlie's", owner=charlie)
    Collection.objects.create(name="admin only")
    [row] = api(alice).get("/api/collections/").json()["results"]
    assert row["name"] == "Alice's" and row["owner"] == "alice" and row["document_count"] == 3
    assert row["shared_with"] == []
    assert [r["name"] for r in api(charlie).get("/api/collections/").json()["results"]] == ["Charlie's"]


def test_the_owner_shares_and_unshares_by_user_name(alices, alice, charlie):
    url = f"/api/collections/{alices.pk}/shared-with/"
    response = api(alice).post(url, {"username": "charlie"}, format="json")
    assert response.status_code == 200 and response.json()["shared_with"] == ["charlie"]
    [row] = api(charlie).get("/api/collections/").json()["results"][:1]
    assert row["name"] == "Alice's" and row["shared_with"] is None  # who else has it is the owner's to know
    created = api(charlie).post(
        "/api/studies/", {"name": "On Alice's", "collection": alices.pk}, format="json"
    )
    assert created.status_code == 201
    response = api(alice).delete(url + "charlie/")
    assert response.status_code == 200 and response.json()["shared_with"] == []
    assert list(alices.shared_with.all()) == []


def test_only_the_owner_shares_and_others_learn_nothing(
    alices, alice, bob, charlie, study, django_user_model
):
    url = f"/api/collections/{alices.pk}/shared-with/"
    # Charlie cannot see it: 404, as for a collection that does not exist.
    assert api(charlie).post(url, {"username": "charlie"}, format="json").status_code == 404
    assert (
        api(charlie)
        .post("/api/collections/999999/shared-with/", {"username": "x"}, format="json")
        .status_code
        == 404
    )
    # Bob sees it through Alice's study built on it, but does not own it: 403 before any name is checked.
    study.collection = alices
    study.save(update_fields=["collection"])
    assert api(bob).post(url, {"username": "charlie"}, format="json").status_code == 403
    assert api(bob).delete(url + "charlie/").status_code == 403
    # An assessor's name and an unknown name are the same 400.
    django_user_model.objects.create_user("ann")
    answers = [api(alice).post(url, {"username": name}, format="json") for name in ("ann", "nobody")]
    assert [a.status_code for a in answers] == [400, 400]
    assert answers[0].json()["username"][0].replace("ann", "X") == answers[1].json()["username"][0].replace(
        "nobody", "X"
    )
    assert list(alices.shared_with.all()) == []
