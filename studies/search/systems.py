"""The Django side of search systems: where a collection's indexes live, building them, and searching with a
study's System (built-in tantivy BM25 over the study's collection, or the researcher's engine over HTTP).

Indexes are a cache of the database (index_versions.py): `manage.py build_index`, an upload or
`tasks.collection_index_build_task` make a new version; a node whose copy is missing or stale builds it in the
background and answers the search "unavailable" meanwhile (the participant's way: "retry later").
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from pathlib import Path

from sessionlab import outbound
from studies.models import Collection, System
from studies.search import index_versions
from studies.search.engines import pyserini
from studies.search.engines.http import HttpSearchSystem, unavailable_page
from studies.search.engines.search import (
    CONFIGURATIONS,
    IndexMismatchError,
    Searcher,
    SearchPage,
)
from studies.search.generative_config import generative_config_problem

logger = logging.getLogger(__name__)

PAGE_SIZE = 10
NOT_READY = "The search system is not ready yet. Please tell the researcher; they will set it up."
MISCONFIGURED = "The search system is not set up correctly. Please tell the researcher."

# A built-in system whose config names no configuration (`{}`) searches with this one: what the docs promise,
# rather than failing only when a participant searches.
DEFAULT_CONFIGURATION = "bm25_title_text"
MAX_HTTP_TIMEOUT = 30.0

_searchers: dict[tuple[str, str, float], Searcher] = {}
_searchers_lock = threading.Lock()


def system_configuration(config) -> str:
    """The built-in configuration a system's config names (DEFAULT_CONFIGURATION when it names none)."""
    return (config.get("configuration") if isinstance(config, dict) else None) or DEFAULT_CONFIGURATION


def _http_config_problem(config: dict) -> str | None:
    preset = config.get("preset")
    if preset is not None and preset != pyserini.PRESET:
        return f"unknown preset {preset!r}; the HTTP presets are: {pyserini.PRESET}"
    allowed = pyserini.SETTINGS if preset else {"url_template", "timeout"}
    unknown = sorted(set(config) - allowed)
    if unknown:
        return f"unknown setting(s) {', '.join(unknown)}; " + (
            "a pyserini system has preset, base_url, index and timeout"
            if preset
            else "an HTTP system has url_template and timeout (or a preset)"
        )
    timeout = config.get("timeout", 5.0)
    try:
        http_engine(config)
    except (ValueError, TypeError) as error:
        return str(error)
    if timeout > MAX_HTTP_TIMEOUT:
        return f"timeout must be at most {MAX_HTTP_TIMEOUT:g} seconds (a participant is waiting)"
    return None


def _builtin_config_problem(config: dict) -> str | None:
    unknown = sorted(set(config) - {"configuration"})
    if unknown:
        return f"unknown setting(s) {', '.join(unknown)}; a built-in system has only a configuration"
    name = config.get("configuration", DEFAULT_CONFIGURATION)
    if name not in CONFIGURATIONS:
        return f"configuration must be one of {', '.join(CONFIGURATIONS)} (not {name!r})"
    return None


def system_config_problem(backend: str, config) -> str | None:
    """Why a system's config cannot work (None: it can). The one rule, asked by the pages' forms, the API's
    serializer and the design services, so a system that cannot search is refused when it is saved."""
    if not isinstance(config, dict):
        return "must be a JSON object"
    if backend == System.Backend.HTTP:
        return _http_config_problem(config)
    if backend == System.Backend.BUILTIN:
        return _builtin_config_problem(config)
    if backend == System.Backend.GENERATIVE:
        return generative_config_problem(config)
    if backend == System.Backend.EXTERNAL:
        return (
            "an external system has no settings (its front-end logs the results it shows)" if config else None
        )
    return f"unknown kind of system {backend!r}"


def http_engine(config: Mapping) -> HttpSearchSystem:
    """The engine an HTTP system's config describes: its own `url_template`, or a named preset's
    (`{"preset": "pyserini", "base_url": ..., "index": ...}`: engines/pyserini.py); ValueError when
    unusable."""
    timeout = config.get("timeout", 5.0)
    if config.get("preset") == pyserini.PRESET:
        template = pyserini.preset_url_template(base_url=config.get("base_url"), index=config.get("index"))
        return HttpSearchSystem(template, timeout, answer="pyserini")
    if config.get("preset") is not None:
        raise ValueError(f"unknown preset {config.get('preset')!r}")
    return HttpSearchSystem(config.get("url_template", ""), timeout)


def collection_index_dir(*, collection: Collection, configuration: str) -> Path:
    """One folder per (collection, configuration) under settings.INDEX_ROOT."""
    return index_versions.collection_index_dir(collection_id=collection.pk, configuration=configuration)


def collection_index_build(*, collection: Collection, configuration: str) -> int:
    """Rebuild the index of `collection` for `configuration` as a new version (every node's copy becomes
    stale and is rebuilt on its next search), building this node's copy now; returns the number of documents.
    """
    index_versions.index_version_bump(collection_id=collection.pk, configuration=configuration)
    return index_versions.index_build_here(collection_id=collection.pk, configuration=configuration)


def collection_index_status(*, collection: Collection) -> dict[str, int | None]:
    """configuration -> number of indexed documents of its current version, or None when it is built on no
    node yet (the database's record; index_versions.index_state adds this node's copy)."""
    return {
        name: index_versions.index_state(collection_id=collection.pk, configuration=name).documents
        for name in CONFIGURATIONS
    }


def collection_index_states(*, collection: Collection) -> dict[str, index_versions.IndexState]:
    """configuration -> its index as the database and this node see it (the set-up checklist's truth)."""
    return {
        name: index_versions.index_state(collection_id=collection.pk, configuration=name)
        for name in CONFIGURATIONS
    }


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
            for old in [k for k in _searchers if k[0] == key[0]]:  # a rebuilt index: the old one goes
                del _searchers[old]
            searcher = Searcher(index_dir, configuration)
            _searchers[key] = searcher
    return searcher


def _failed(page: int, message: str, detail: str) -> SearchPage:
    return SearchPage([], None, page, message, detail, PAGE_SIZE)


def http_search(
    engine: HttpSearchSystem, query: str, page: int = 1, page_size: int = PAGE_SIZE, *, scope: str = ""
) -> SearchPage:
    """One page of a researcher's engine, called through sessionlab.outbound (its address rules, deadline and
    breaker). A failure is a page marked `unavailable` whose detail is only a category (docs/security.md,
    "Outbound HTTP"); the cause is in the server log."""
    if page < 1 or page_size < 1:
        raise ValueError("page and page_size must be >= 1")
    try:
        response = outbound.fetch(engine.url_for(query, page, page_size), timeout=engine.timeout, scope=scope)
    except outbound.OutboundError as error:
        logger.warning("http system %s: %s (%s)", engine.url_template, error.category, error.detail)
        return unavailable_page(page, page_size, error.category)
    return engine.page_from(response.status, response.body, page, page_size)


def system_search(
    *, system: System, query: str, page: int = 1, versions: Mapping[str, int] | None = None
) -> SearchPage:
    """One page (10 results) of `system`'s answer to `query`. Never raises for a participant: problems come
    back as `SearchPage.error` (shown) and `SearchPage.detail` (logged; for an HTTP system a category only).
    `unavailable` is set when an HTTP system fails or this node's copy of a built-in index is missing or stale
    (built in the background meanwhile): the participant's way answers "retry later", search_costs.py.
    `versions`: the current index numbers of the system's collection (configuration -> number), when the
    caller read them already (the event batch does, with its sessions' lock); else they are read here."""
    if system.backend == System.Backend.GENERATIVE:  # it answers (studies/search/generative.py), not ranks
        return _failed(page, MISCONFIGURED, "a generative system answers questions; it has no results list")
    if system.backend == System.Backend.HTTP:
        try:
            engine = http_engine(system.config)
        except (ValueError, TypeError) as exc:
            logger.error("system %s of study %s is misconfigured: %s", system.code, system.study_id, exc)
            return _failed(page, MISCONFIGURED, str(exc))
        # The breaker is the study's (a lab's): another lab's failing calls to one engine never open it.
        result = http_search(engine, query, page, PAGE_SIZE, scope=f"study:{system.study_id}")
        if result.unavailable:
            logger.warning(
                "http system %s of study %s failed: %s", system.code, system.study_id, result.detail
            )
        return result
    configuration = system_configuration(system.config)
    collection = system.study.collection
    if collection is None:
        logger.error("study %s has no collection; system %s cannot search", system.study_id, system.code)
        return _failed(page, NOT_READY, "the study has no collection")
    try:
        index_dir = collection_index_dir(collection=collection, configuration=configuration)
        if versions is None:
            current = index_versions.index_version_current(
                collection_id=collection.pk, configuration=configuration
            )
            number = None if current is None else current.number
        else:
            number = versions.get(configuration)
        here = index_versions.local_state_of(index_dir, number)
        if here != index_versions.CURRENT:  # this node builds its copy meanwhile: ask again later
            started = index_versions.index_build_soon(
                collection_id=collection.pk, configuration=configuration
            )
            logger.warning(
                "system %s of study %s: index %s is %s on this node%s",
                system.code,
                system.study_id,
                index_dir,
                here,
                "; building it" if started else "",
            )
            return unavailable_page(page, PAGE_SIZE, f"index {here} on this node")
        searcher = _searcher(index_dir, configuration)
    except (IndexMismatchError, ValueError) as exc:
        logger.error("system %s of study %s cannot search: %s", system.code, system.study_id, exc)
        return _failed(page, NOT_READY, str(exc))
    return searcher.search(query, page, PAGE_SIZE)
