"""Importing an archive's design sections: the study's settings, its grade scale, the documents (by
collection), the scenarios and the systems. Each checks its rows as it reads them (reader.py)."""

from __future__ import annotations

import json

from django.conf import settings
from django.utils import timezone

from studies.design.latin_square import DESIGNS
from studies.design.lifecycle import PAUSED
from studies.design.services import study_slug_free, system_check_config
from studies.errors import CollectionAccessError, CollectionImportError, DocumentRefused, SystemConfigError
from studies.interchange.archive.layout import FORMAT, VERSION
from studies.interchange.archive.reader import ArchiveReader
from studies.library.collections import collection_named_or_created, documents_add
from studies.models import Collection, Document, GradeLevel, Scenario, Study, System
from studies.population import Population, PopulationError
from studies.questionnaires.items import questionnaire_errors


def _questionnaire(r: ArchiveReader, info, key: str, where: str) -> list:
    """A questionnaire as the API takes it (studies/questionnaires/items.py): a malformed one broke the
    pages."""
    value = r.get(info, key, where, list, default=[])
    errors = questionnaire_errors(value)
    if errors:
        r.fail(info, f"{where}.{key}", "; ".join(errors))
    return value


def study_imported(r: ArchiveReader, data, owner, name: str | None) -> tuple[Study, dict]:
    """The archive's format checked, and its study created (owned by `owner`); returns it and `$.study`."""
    r.obj(data, "$")
    if data.get("format") != FORMAT:
        r.fail(data, "$.format", f"expected {FORMAT!r}, found {data.get('format')!r}")
    if data.get("version") != VERSION:
        r.fail(data, "$.version", f"this SessionLab reads version {VERSION}, found {data.get('version')!r}")
    info = r.obj(data.get("study"), "$.study", data)
    W = "$.study"
    study = Study.objects.create(
        name=name or r.get(info, "name", W, str),
        slug=study_slug_free(r.get(info, "slug", W, str), info["name"]),
        description=r.get(info, "description", W, str, default=""),
        owner=owner,
        consent_text=r.get(info, "consent_text", W, str, default=""),
        consent_version=r.get(info, "consent_version", W, str, default="1"),
        questionnaire=_questionnaire(r, info, "questionnaire", W),
        post_task_questionnaire=_questionnaire(r, info, "post_task_questionnaire", W),
        pre_task_questionnaire=_questionnaire(r, info, "pre_task_questionnaire", W),
        time_limit_minutes=r.get(info, "time_limit_minutes", W, int, null=True, default=None),
        record_exposure=r.get(info, "record_exposure", W, bool, default=True),
        record_attention=r.get(info, "record_attention", W, bool, default=True),
        design=_design(r, info, W),
        analysis_population=_population(r, info, W),
        design_locked_at=r.get(info, "design_locked_at", W, "time", null=True, default=None),
        created_at=r.get(info, "created_at", W, "time", null=True, default=None) or timezone.now(),
        # Paused: the copy arrives with its data and takes no one new until its researcher opens it (a null
        # status would read as open; studies/design/lifecycle.py).
        status=PAUSED,
        status_changed_at=timezone.now(),
    )
    study.researchers.add(owner)
    return study, info


def _design(r: ArchiveReader, info, where: str) -> str | None:
    """The study's design (docs/latin-square.md): within or between, null (and older archives: absent)
    reading as within."""
    design = r.get(info, "design", where, str, null=True, default=None)
    if design is not None and design not in DESIGNS:
        r.fail(info, f"{where}.design", f"{design!r} is not one of {', '.join(DESIGNS)}")
    return design


def _population(r: ArchiveReader, info: dict, where: str) -> str | None:
    """The study's analysis population as its text (studies/population.py), checked; null: the default."""
    text = r.get(info, "analysis_population", where, str, null=True, default=None)
    try:
        return Population.parse(text).code() if text else None
    except PopulationError as exc:
        r.fail(info, f"{where}.analysis_population", str(exc))


def grade_scale_imported(r: ArchiveReader, data, study: Study) -> set[int]:
    """The study's grade levels (`$.grade_levels`); returns the scale's values."""
    scale: set[int] = set()
    levels = []
    for level, where in r.items(data, "grade_levels", "$"):
        value = r.get(level, "value", where, int)
        r.once(
            scale,
            value,
            level,
            f"{where}.value",
            f"{value} is outside 0..9 or given twice",
            allowed=0 <= value <= 9,
        )
        levels.append(GradeLevel(study=study, value=value, label=r.get(level, "label", where, str)))
    if len(levels) < 2:
        r.fail(data, "$.grade_levels", "a grade scale needs at least two grades")
    GradeLevel.objects.bulk_create(levels)
    return scale


def _collection_for(r: ArchiveReader, obj, where: str, name: str, owner) -> Collection:
    """The archive's collection by name: one the owner may use, or a new one they own
    (`studies.library.collections.collection_named_or_created`). Another lab's collection of that name is
    refused: its documents (and which ids it holds) are not the archive's to take."""
    try:
        return collection_named_or_created(name=name, owner=owner)
    except CollectionAccessError:
        r.fail(
            obj,
            where,
            f"a collection named {name!r} exists and is not shared with {owner.username!r}; "
            "ask its owner to share it, or rename the collection in the archive",
        )
    except CollectionImportError as error:
        r.fail(obj, where, str(error))


# Documents are stored this many at a time, or as soon as their texts pass this many characters (the SQL of
# a batch is a few times that), so the import holds one batch of texts, not the archive's.
DOCUMENT_BATCH = 200
DOCUMENT_BATCH_CHARACTERS = 1024 * 1024


def documents_imported(
    r: ArchiveReader, data, info, study: Study, owner
) -> tuple[dict[str, int], dict[int, str]]:
    """The documents (`$.documents`) by id: what the named collection already holds is reused, the rest is
    created, a batch at a time. Sets the study's collection (`$.study.collection`). Returns their row ids by
    id and {exported row id: id}."""
    collections: dict[str, Collection] = {}
    documents: dict[str, int] = {}
    batch: list[tuple[Collection, dict, str]] = []
    characters = 0
    old_document_ids: dict[int, str] = {}
    listed: set[str] = set()
    for item, where in r.items(data, "documents", "$"):
        external_id = r.get(item, "external_id", where, str)
        r.once(listed, external_id, item, f"{where}.external_id", f"document {external_id!r} is listed twice")
        collection_name = r.get(item, "collection", where, str)
        if collection_name not in collections:
            collections[collection_name] = _collection_for(
                r, item, f"{where}.collection", collection_name, owner
            )
        batch.append((collections[collection_name], item, where))
        characters += sum(len(item[key]) for key in ("title", "text") if isinstance(item.get(key), str))
        if isinstance(item.get("id"), int):
            old_document_ids[item["id"]] = external_id
        if len(batch) == DOCUMENT_BATCH or characters > DOCUMENT_BATCH_CHARACTERS:
            _documents_stored(r, batch, documents)
            batch, characters = [], 0
    _documents_stored(r, batch, documents)
    W = "$.study"
    study_collection = r.get(info, "collection", W, str, null=True, default=None)
    if study_collection is not None:
        if study_collection not in collections:
            collections[study_collection] = _collection_for(
                r, info, f"{W}.collection", study_collection, owner
            )
        study.collection = collections[study_collection]
        study.save(update_fields=["collection"])
    return documents, old_document_ids


def _documents_stored(r: ArchiveReader, batch: list[tuple[Collection, dict, str]], documents: dict) -> None:
    """One batch of the archive's documents: each found by id in its collection, or created there; their row
    ids added to `documents`."""
    by_collection: dict[int, list[str]] = {}
    for collection, item, _where in batch:
        by_collection.setdefault(collection.pk, []).append(item["external_id"])
    for collection_id, ids in by_collection.items():
        found = Document.objects.filter(collection_id=collection_id, external_id__in=ids)
        documents.update(found.values_list("external_id", "pk"))
    fresh: dict[int, list[tuple[Document, dict, str]]] = {}
    for collection, item, where in batch:
        external_id = item["external_id"]
        if external_id not in documents:
            document = Document(
                external_id=external_id,
                title=r.get(item, "title", where, str, default=""),
                text=r.get(item, "text", where, str, default=""),
                extra=r.get(item, "extra", where, dict, default={}),
            )
            _refuse_an_oversized_document(r, item, where, document)
            fresh.setdefault(collection.pk, []).append((document, item, where))
    collection_of = {collection.pk: collection for collection, _item, _where in batch}
    for collection_id, items in fresh.items():
        try:
            made = documents_add(
                collection=collection_of[collection_id], documents=[d for d, _i, _w in items]
            )
        except DocumentRefused as refused:
            _document, item, where = items[refused.index]
            r.fail(item, where, refused.reason)
        for document in made:
            documents[document.external_id] = document.pk


def _refuse_an_oversized_document(r: ArchiveReader, item, where: str, document: Document) -> None:
    """A document whose title, text and extra fields (as UTF-8 and compact JSON) pass
    ARCHIVE_MAX_DOCUMENT_BYTES is refused by its id (docs/security.md)."""
    limit = settings.ARCHIVE_MAX_DOCUMENT_BYTES
    size = (
        len(document.title.encode("utf-8"))
        + len(document.text.encode("utf-8"))
        + len(json.dumps(document.extra, separators=(",", ":")).encode("utf-8"))
    )
    if size > limit:
        r.fail(
            item,
            where,
            f"document {document.external_id!r} has {size} bytes, over ARCHIVE_MAX_DOCUMENT_BYTES ({limit})",
        )


def scenarios_imported(r: ArchiveReader, data, study: Study) -> dict[str, Scenario]:
    """The scenarios (`$.scenarios`) by code."""
    scenarios: dict[str, Scenario] = {}
    codes: set[str] = set()
    for item, where in r.items(data, "scenarios", "$"):
        code = r.get(item, "code", where, str)
        r.once(codes, code, item, f"{where}.code", f"scenario {code!r} is listed twice")
        scenarios[code] = Scenario(
            study=study,
            code=code,
            title=r.get(item, "title", where, str),
            text=r.get(item, "text", where, str),
            topic_id=r.get(item, "topic_id", where, str),
            practice=r.get(item, "practice", where, bool, default=False),
        )
    topics = [s.topic_id for s in scenarios.values()]
    if len(set(topics)) != len(topics):
        r.fail(data, "$.scenarios", "two scenarios share a topic_id")
    Scenario.objects.bulk_create(scenarios.values())
    return scenarios


def systems_imported(r: ArchiveReader, data, study: Study) -> dict[str, System]:
    """The systems (`$.systems`) by code, each configuration checked by the design services' one rule."""
    systems: dict[str, System] = {}
    codes: set[str] = set()
    for item, where in r.items(data, "systems", "$"):
        code = r.get(item, "code", where, str)
        r.once(codes, code, item, f"{where}.code", f"system {code!r} is listed twice")
        backend = r.get(item, "backend", where, str)
        config = r.get(item, "config", where, dict, default={})
        if backend == System.Backend.HTTP and set(config) == {"source"}:
            # A Session Track log's system as imports before November 2026 stored it: the log holds the
            # results shown, which is what an external system is.
            r.notes.append(
                f"{r.path}:{getattr(item, 'line', None)}: {where}: an HTTP system with only a "
                "source (a Session Track log's) imported as an external system"
            )
            backend, config = System.Backend.EXTERNAL, {}
        try:
            system_check_config(code=code, backend=backend, config=config)  # the services' one rule
        except SystemConfigError as error:
            r.fail(item, f"{where}.{error.field}", str(error))
        systems[code] = System(
            study=study, code=code, name=r.get(item, "name", where, str), backend=backend, config=config
        )
    System.objects.bulk_create(systems.values())
    return systems
