"""THE writer of collections and their documents (docs/collections-and-systems.md).

Every way a collection comes in calls these: the browser's upload (`studies.library.services`),
`manage.py import_collection` (`studies.library.collection_import`), a study archive's import
(`studies.interchange.archive.import_design`), the Session Track import
(`studies.interchange.session_track.importer`) and the demo (`studies.demo`). Each document is checked
before any is written, and a refusal names it by its place in the input and its id, with the field and the
reason (`CollectionImportError`): what the columns cannot hold would otherwise be an error from the
database naming no document (PostgreSQL) or be stored as it is (SQLite).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import islice
from typing import Protocol

from studies.design.selectors import collection_usable_by
from studies.errors import CollectionAccessError, CollectionImportError, DocumentRefused
from studies.models import Collection, Document

NAME_MAX = 200  # Collection.name's max_length
EXTERNAL_ID_MAX = 200  # Document.external_id's max_length
BATCH = 500  # documents written in one statement


class DocumentInput(Protocol):
    """What a document to store holds: the parsers' `studies.search.engines.formats.Document`, or an unsaved
    `Document`."""

    @property
    def external_id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def extra(self) -> Mapping: ...


def collection_name_checked(name: str) -> str:
    """The collection's name, stripped; CollectionImportError when it is empty, too long or taken."""
    name = (name or "").strip()
    if not name:
        raise CollectionImportError("the collection needs a name")
    if len(name) > NAME_MAX:
        raise CollectionImportError(f"a collection's name has at most {NAME_MAX} characters")
    if Collection.objects.filter(name=name).exists():
        raise CollectionImportError(f"a collection named {name!r} already exists; choose another name")
    return name


def collection_create(
    *, name: str, owner, description: str = "", documents: Iterable[DocumentInput] = ()
) -> Collection:
    """A new collection named `name` (checked by `collection_name_checked`), owned by `owner` (None: admin
    only), with `documents` (`documents_add`). The caller holds the transaction that makes it all or
    nothing."""
    collection = Collection.objects.create(
        name=collection_name_checked(name), description=description, owner=owner
    )
    documents_add(collection=collection, documents=documents, fresh=True)
    return collection


def collection_named_or_created(*, name: str, owner, description: str = "") -> Collection:
    """The collection named `name` when `owner` may use it, else a new one they own. Another lab's collection
    of that name is refused (CollectionAccessError): its documents, and which ids it holds, are not the
    caller's to take."""
    collection = Collection.objects.filter(name=name).first()
    if collection is None:
        return collection_create(name=name, owner=owner, description=description)
    if not collection_usable_by(user=owner, collection=collection):
        raise CollectionAccessError(
            f"a collection named {name!r} exists and is not shared with {getattr(owner, 'username', '?')!r}"
        )
    return collection


def documents_add(
    *, collection: Collection, documents: Iterable[DocumentInput], fresh: bool = False
) -> list[Document]:
    """Store `documents` in `collection`, BATCH at a time; returns the rows made (with their ids). Every
    document is checked before the first is written (`_document_problem`), and an id given twice or already
    in the collection is refused: a refusal (DocumentRefused) names the document, and nothing of this call
    is written. `fresh`: the collection was made just now, so its ids are not looked up."""
    rows: list[Document] = []
    seen: set[str] = set()
    for index, document in enumerate(documents):
        problem = _document_problem(document)
        if problem is None and document.external_id in seen:
            problem = "is given twice"
        if problem is not None:
            raise DocumentRefused(index, getattr(document, "external_id", None), problem)
        seen.add(document.external_id)
        rows.append(
            Document(
                collection=collection,
                external_id=document.external_id,
                title=document.title,
                text=document.text,
                extra=dict(document.extra),
            )
        )
    if not fresh:
        _refuse_stored_ids(collection, [row.external_id for row in rows])
    made: list[Document] = []
    batches = iter(rows)
    while batch := list(islice(batches, BATCH)):
        made.extend(Document.objects.bulk_create(batch))
    return made


def _document_problem(document: DocumentInput) -> str | None:
    """Why `document` cannot be stored, or None."""
    external_id = getattr(document, "external_id", None)
    if not isinstance(external_id, str) or not external_id:
        return "id: a document needs an id (text)"
    if len(external_id) > EXTERNAL_ID_MAX:
        return f"id: longer than {EXTERNAL_ID_MAX} characters"
    for field in ("title", "text"):
        value = getattr(document, field, None)
        if not isinstance(value, str):
            return f"{field}: not text"
    if not isinstance(getattr(document, "extra", None), Mapping):
        return "extra: not an object"
    for field, shown in (("external_id", "id"), ("title", "title"), ("text", "text")):
        if "\x00" in getattr(document, field):
            return f"{shown}: a NUL character, which the database cannot store"
    return None


def _refuse_stored_ids(collection: Collection, external_ids: list[str]) -> None:
    """CollectionImportError naming the first of `external_ids` the collection already holds."""
    for start in range(0, len(external_ids), BATCH):
        part = external_ids[start : start + BATCH]
        stored = set(
            Document.objects.filter(collection=collection, external_id__in=part).values_list(
                "external_id", flat=True
            )
        )
        if stored:
            index, first = next((start + i, e) for i, e in enumerate(part) if e in stored)
            raise DocumentRefused(
                index, first, f"collection {collection.name!r} already holds a document of that id"
            )
