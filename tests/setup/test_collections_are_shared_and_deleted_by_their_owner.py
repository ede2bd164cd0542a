from studies.models import Collection, Document


def owned(alice, name="Alice's docs"):
    collection = Collection.objects.create(name=name, owner=alice)
    Document.objects.create(collection=collection, external_id="d1", title="t", text="wing")
    return collection


def test_the_list_shows_own_and_shared_collections_only(client, alice, charlie):
    mine, theirs = owned(alice), owned(charlie, "Charlie's docs")
    client.force_login(alice)
    page = client.get("/collections/").content.decode()
    assert mine.name.replace("'", "&#x27;") in page and "Charlie" not in page
    theirs.shared_with.add(alice)
    assert "Charlie&#x27;s docs" in client.get("/collections/").content.decode()


def test_the_owner_shares_and_unshares(client, alice, charlie):
    collection = owned(alice)
    client.force_login(alice)
    response = client.post(f"/collections/{collection.pk}/share/", {"username": "charlie"}, follow=True)
    assert "Shared with charlie." in response.content.decode()
    assert list(collection.shared_with.all()) == [charlie]
    client.post(f"/collections/{collection.pk}/unshare/", {"username": "charlie"})
    assert not collection.shared_with.exists()


def test_sharing_with_an_unknown_or_non_researcher_account_is_refused(client, alice, django_user_model):
    collection = owned(alice)
    django_user_model.objects.create_user("ann", password="x")  # an assessor, not staff
    client.force_login(alice)
    page = client.post(
        f"/collections/{collection.pk}/share/", {"username": "nobody"}, follow=True
    ).content.decode()
    assert "no researcher named &#x27;nobody&#x27;" in page
    page = client.post(
        f"/collections/{collection.pk}/share/", {"username": "ann"}, follow=True
    ).content.decode()
    assert "not a researcher account" in page
    assert not collection.shared_with.exists()


def test_a_researcher_it_is_shared_with_may_not_share_or_delete_it(client, alice, charlie):
    collection = owned(alice)
    collection.shared_with.add(charlie)
    client.force_login(charlie)
    page = client.post(f"/collections/{collection.pk}/delete/", follow=True).content.decode()
    assert "only the owner" in page and Collection.objects.filter(pk=collection.pk).exists()
    client.post(f"/collections/{collection.pk}/share/", {"username": "charlie"})
    assert (
        "Only its owner shares or deletes it."
        in client.get(f"/collections/{collection.pk}/").content.decode()
    )


def test_another_labs_collection_is_a_404(client, alice, charlie):
    collection = owned(alice)
    client.force_login(charlie)
    assert client.get(f"/collections/{collection.pk}/").status_code == 404
    assert client.post(f"/collections/{collection.pk}/delete/").status_code == 404
    assert Collection.objects.filter(pk=collection.pk).exists()


def test_the_owner_deletes_a_collection_no_study_uses(client, alice, settings, tmp_path):
    collection = owned(alice)
    index = tmp_path / "indexes" / f"collection-{collection.pk}"
    index.mkdir(parents=True)
    client.force_login(alice)
    response = client.post(f"/collections/{collection.pk}/delete/")
    assert response.status_code == 302 and response["Location"] == "/collections/"
    assert not Collection.objects.filter(pk=collection.pk).exists() and not Document.objects.exists()
    assert not index.exists()


def test_a_collection_a_study_searches_is_not_deleted(client, alice, study):
    collection = owned(alice)
    study.collection = collection
    study.save(update_fields=["collection"])
    client.force_login(alice)
    page = client.post(f"/collections/{collection.pk}/delete/", follow=True).content.decode()
    assert "is used by the study" in page and Collection.objects.filter(pk=collection.pk).exists()
