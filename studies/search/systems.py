"""The Django side of search systems: where a collection's indexes live, building them, and searching with a
study's System (built-in tantivy BM25 over the study's collection, or the researcher's engine over HTTP).

Indexes are built by `manage.py build_index` or `tasks.collection_index_build_task`, never while a participant
searches: a search on a missing index returns a plain message for the participant and logs the cause.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from django.conf import settings

from studies.models import Collection, System
from studies.search.engines.formats import Document as ParsedDocument
from studies.search.engines.http import HttpSearchSystem
from studies.search.engines.search import (
    CONFIGURATIONS,
    IndexMismatchError,
    Searcher,
    SearchPage,
    build_index,
    get_config,
    read_index_meta,
)

logger = logging.getLogger(__name__)

PAGE_SIZE = 10
NOT_READY = "The search system is not ready yet. Please tell the researcher; they will set it up."
MISCONFIGURED = "The search system is not set up correctly. Please tell the researcher."

_searchers: dict[tuple[str, str, float], Searcher] = {}
_searchers_lock = threading.Lock()


def collection_index_dir(*, collection: Collection, configuration: str) -> Path:
    """One folder per (collection, configuration) under settings.INDEX_ROOT."""
    get_config(configuration)  # refuses unknown names
    return Path(settings.INDEX_ROOT) / f"collection-{collection.pk}" / configuration


def collection_index_build(*, collection: Collection, configuration: str) -> int:
    """Build (or rebuild) the index of `collection` for `configuration`; returns the number of documents.

    Idempotent: building twice gives the same index (the engine swaps a finished build into place)."""
    index_dir = collection_index_dir(collection=collection, configuration=configuration)
    documents = (
        ParsedDocument(external_id, title, text)
        for external_id, title, text in collection.documents.order_by("pk").values_list(
            "external_id", "title", "text").iterator(chunk_size=2000)
    )
    count = build_index(documents, index_dir, configuration)
    with _searchers_lock:
        for key in [k for k in _searchers if k[0] == str(index_dir)]:
            del _searchers[key]
    logger.info("built index %s (%d documents)", index_dir, count)
    return count


def collection_index_status(*, collection: Collection) -> dict[str, int | None]:
    """configuration -> number of indexed documents, or None when that index is not built."""
    status: dict[str, int | None] = {}
    for name in CONFIGURATIONS:
        try:
            status[name] = read_index_meta(collection_index_dir(collection=collection, configuration=name))["documents"]
        except IndexMismatchError:
            status[name] = None
    return status


def _searcher(index_dir: Path, configuration: str) -> Searcher:
    meta = index_dir / "sessionlab-index.json"
    try:
        stamp = meta.stat().st_mtime
    except OSError:
        raise IndexMismatchError(f"{index_dir} holds no index; run manage.py build_index") from None
    key = (str(index_dir), configuration, stamp)
    with _searchers_lock:
        searcher = _searchers.get(key)
        if searcher is None:
            searcher = Searcher(index_dir, configuration)
            _searchers[key] = searcher
    return searcher


def _failed(page: int, message: str, detail: str) -> SearchPage:
    return SearchPage([], None, page, message, detail, PAGE_SIZE)


def system_search(*, system: System, query: str, page: int = 1) -> SearchPage:
    """One page (10 results) of `system`'s answer to `query`. Never raises for a participant: problems come
    back as `SearchPage.error` (shown) and `SearchPage.detail` (logged)."""
    if system.backend == System.Backend.HTTP:
        try:
            engine = HttpSearchSystem(system.config.get("url_template", ""), system.config.get("timeout", 5.0))
        except ValueError as exc:
            logger.error("system %s of study %s is misconfigured: %s", system.code, system.study_id, exc)
            return _failed(page, MISCONFIGURED, str(exc))
        result = engine.search(query, page, PAGE_SIZE)
        if result.detail and not result.results:
            logger.warning("http system %s of study %s failed: %s", system.code, system.study_id, result.detail)
        return result
    configuration = system.config.get("configuration", "")
    collection = system.study.collection
    if collection is None:
        logger.error("study %s has no collection; system %s cannot search", system.study_id, system.code)
        return _failed(page, NOT_READY, "the study has no collection")
    try:
        index_dir = collection_index_dir(collection=collection, configuration=configuration)
        searcher = _searcher(index_dir, configuration)
    except (IndexMismatchError, ValueError) as exc:
        logger.error("system %s of study %s cannot search: %s", system.code, system.study_id, exc)
        return _failed(page, NOT_READY, str(exc))
    return searcher.search(query, page, PAGE_SIZE)
