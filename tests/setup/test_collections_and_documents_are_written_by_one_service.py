"""Collections and their documents have one writer, `studies.library.collections`: the upload, the collection
import, the archive's and the Session Track's imports and the demo all call it. It checks every document
before the first is written and refuses one it cannot store by its place in the input, its id, the field and
the reason."""

import re
from pathlib import Path

import pytest
from django.db import transaction

from studies.errors import CollectionAccessError, CollectionImportError, DocumentRefused
from studies.library.collections import (
    collection_create,
    collection_named_or_created,
    documents_add,
)
from studies.models import Collection, Document
from studies.search.engines.formats import Document as ParsedDocument

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
SERVICE = ROOT / "studies" / "library" / "collections.py"


def _documents(*ids):
    return [ParsedDocument(i, f"title {i}", f"text {i}") for i in ids]


def test_a_collection_is_made_with_its_documents(alice):
    collection = collection_create(
        name="  Lab docs ", owner=alice, description="d", documents=_documents("a", "b")
    )
    assert (collection.name, collection.owner, collection.description) == ("Lab docs", alice, "d")
    assert list(collection.documents.order_by("external_id").values_list("external_id", "title", "text")) == [
        ("a", "title a", "text a"),
        ("b", "title b", "text b"),
    ]


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        (ParsedDocument("", "t", "x"), "id: a document needs an id (text)"),
        (ParsedDocument("x" * 201, "t", "x"), "id: longer than 200 characters"),
        (ParsedDocument("d2", 7, "x"), "title: not text"),  # type: ignore[arg-type]
        (ParsedDocument("d2", "t", None), "text: not text"),  # type: ignore[arg-type]
        (ParsedDocument("d2", "t", "x", extra=[1]), "extra: not an object"),  # type: ignore[arg-type]
        (ParsedDocument("d2", "t", "a\x00b"), "text: a NUL character, which the database cannot store"),
        (ParsedDocument("d\x002", "t", "x"), "id: a NUL character, which the database cannot store"),
        (ParsedDocument("d1", "t", "x"), "is given twice"),
    ],
)
def test_a_document_it_cannot_store_is_refused_by_its_place_and_nothing_is_written(alice, document, reason):
    before = Collection.objects.count(), Document.objects.count()
    with pytest.raises(DocumentRefused) as caught, transaction.atomic():
        collection_create(name="bad", owner=alice, documents=[*_documents("d1"), document, *_documents("d3")])
    assert (caught.value.index, caught.value.reason) == (1, reason)
    assert str(caught.value).startswith("document 2 (")
    assert (Collection.objects.count(), Document.objects.count()) == before


def test_an_id_the_collection_already_holds_is_refused_and_nothing_more_is_written(alice):
    collection = collection_create(name="lab", owner=alice, documents=_documents("a", "b"))
    with pytest.raises(DocumentRefused) as caught:
        documents_add(collection=collection, documents=_documents("c", "b"))
    assert caught.value.index == 1 and "already holds a document of that id" in caught.value.reason
    assert sorted(collection.documents.values_list("external_id", flat=True)) == ["a", "b"]


def test_added_documents_come_back_with_their_ids(alice):
    collection = collection_create(name="lab", owner=alice)
    made = documents_add(collection=collection, documents=_documents("a", "b"))
    assert {d.external_id: d.pk for d in made} == dict(collection.documents.values_list("external_id", "pk"))


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("  ", "the collection needs a name"),
        ("n" * 201, "at most 200 characters"),
        ("taken", "a collection named 'taken' already exists"),
    ],
)
def test_an_empty_long_or_taken_name_is_refused(alice, name, message):
    collection_create(name="taken", owner=alice)
    with pytest.raises(CollectionImportError, match=message):
        collection_create(name=name, owner=alice)
    assert Collection.objects.count() == 1


def test_a_collection_of_the_name_is_reused_by_who_may_use_it_and_refused_to_others(alice, charlie):
    own = collection_create(name="lab", owner=alice)
    assert collection_named_or_created(name="lab", owner=alice) == own
    with pytest.raises(CollectionAccessError, match="not shared with 'charlie'"):
        collection_named_or_created(name="lab", owner=charlie)
    made = collection_named_or_created(name="charlie's", owner=charlie, description="new")
    assert (made.owner, made.description) == (charlie, "new")


def test_no_other_module_writes_a_collection_or_its_documents():
    writes = re.compile(
        r"\b(Collection|Document)\.objects\.(create|bulk_create|get_or_create|update_or_create)\("
    )
    writers = sorted(
        str(path.relative_to(ROOT))
        for folder in ("studies", "scoring", "sessionlab")
        for path in (ROOT / folder).rglob("*.py")
        if "migrations" not in path.parts
        and path != SERVICE
        and writes.search(path.read_text(encoding="utf-8"))
    )
    assert writers == []
    assert writes.search(SERVICE.read_text(encoding="utf-8"))  # the pattern finds what it looks for
