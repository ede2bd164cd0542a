"""Who may use a collection, who may share it, and where an imported collection's owner comes from
(docs/collections-and-systems.md, "Owners and sharing")."""

import importlib

import pytest
from django.apps import apps
from django.core.management import call_command

from studies.design import services
from studies.design.selectors import collections_visible_to
from studies.library.collection_import import collection_import
from studies.models import Collection

pytestmark = pytest.mark.django_db

JSONL = '{"id": "d1", "text": "one"}\n{"id": "d2", "text": "two"}\n'


@pytest.fixture
def collections(alice, charlie):
    return {
        "alice": Collection.objects.create(name="a", owner=alice),
        "charlie": Collection.objects.create(name="c", owner=charlie),
        "nobody": Collection.objects.create(name="n"),
    }


def names(user):
    return set(collections_visible_to(user).values_list("name", flat=True))


def test_a_researcher_sees_their_own_and_shared_collections_and_a_superuser_all(
    collections, alice, charlie, admin_user
):
    assert names(alice) == {"a"} and names(charlie) == {"c"}
    assert names(admin_user) == {"a", "c", "n"}  # no owner: admin only
    services.collection_share(collection=collections["alice"], user=charlie, by=alice)
    assert names(charlie) == {"a", "c"}


def test_a_researcher_of_a_study_sees_its_collection(collections, study, bob):
    study.collection = collections["charlie"]  # set before the rule, as an old row
    study.save(update_fields=["collection"])
    assert "c" in names(bob)


def test_only_the_owner_or_a_superuser_shares_and_only_with_researchers(
    collections, alice, charlie, admin_user, django_user_model
):
    with pytest.raises(services.CollectionAccessError, match="only the owner"):
        services.collection_share(collection=collections["alice"], user=charlie, by=charlie)
    assessor = django_user_model.objects.create_user("ann")
    with pytest.raises(services.CollectionAccessError, match="not a researcher account"):
        services.collection_share(collection=collections["alice"], user=assessor, by=alice)
    assert services.collection_share(collection=collections["nobody"], user=charlie, by=admin_user)
    assert not services.collection_share(collection=collections["nobody"], user=charlie, by=admin_user)
    with pytest.raises(services.CollectionAccessError):
        services.collection_unshare(collection=collections["nobody"], user=charlie, by=charlie)
    assert services.collection_unshare(collection=collections["nobody"], user=charlie, by=admin_user)
    assert names(charlie) == {"c"}


def test_an_imported_collection_belongs_to_the_study_owner_or_the_named_owner(
    study, alice, charlie, tmp_path
):
    path = tmp_path / "docs.jsonl"
    path.write_text(JSONL)
    with_study = collection_import(
        name="for the study", format="jsonl", paths=[path], study=study, created_by=charlie
    )
    assert with_study.collection.owner == alice
    alone = collection_import(name="alone", format="jsonl", paths=[path], owner=charlie)
    assert alone.collection.owner == charlie
    assert collection_import(name="admin only", format="jsonl", paths=[path]).collection.owner is None


def test_the_import_collection_command_takes_an_owner(charlie, tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(JSONL)
    call_command("import_collection", str(path), "--format", "jsonl", "--name", "cmd", "--owner", "charlie")
    assert Collection.objects.get(name="cmd").owner == charlie


def test_the_migration_gives_existing_collections_the_owners_of_their_studies(alice, charlie):
    migration = importlib.import_module("studies.migrations.0006_collection_owner")
    used, unused = Collection.objects.create(name="used"), Collection.objects.create(name="unused")
    first = services.study_create(owner=alice, name="first")
    second = services.study_create(owner=charlie, name="second")
    for study in (first, second):
        study.collection = used
        study.save(update_fields=["collection"])
    migration.owners_from_studies(apps, None)
    used.refresh_from_db()
    unused.refresh_from_db()
    assert used.owner == alice and list(used.shared_with.all()) == [charlie]
    assert unused.owner is None
