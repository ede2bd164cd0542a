"""What a batch's searches cost (ingest.py): SessionLab's engine is run for a query or a page not shown
before, at most EVENTS_SEARCHES_PER_BATCH a batch and EVENTS_SEARCHES_PER_MINUTE a participant a minute at the
endpoints; past either, the search and the session's later events are told to wait (RetryLater). An HTTP
system's pages are fetched before the batch's transaction (http_pages_fetch, called by ingest.py), counted by
the same caps; one that failed is answered "retry later" too, never stored as a query without results, as is
a built-in system's search on a node whose index is still being built (studies/search/index_versions.py). The
minute's count is in the cache, read once a batch and written after its commit. The session's system is built
from the row read with its lock, once a batch.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime

from django.conf import settings
from django.core.cache import cache

from sessionlab import plain_sql
from studies.errors import RetryLater
from studies.models import Collection, System
from studies.participation.events.ingest_batch import Batch, SessionState
from studies.search.engines.http import unavailable_page
from studies.search.engines.search import SearchPage
from studies.search.systems import PAGE_SIZE, system_search

logger = logging.getLogger(__name__)

TOO_MANY = "Send it again later: more than {limit} searches {scope}."
SYSTEM_AWAY = "The search system is not available right now; send it again later."


def minute_key(participant, now: datetime) -> str:
    """The cache key counting a participant's searches in this minute: by their token's digest (a database id
    may come back after a rollback, a token does not)."""
    return f"events:searches:{participant.access_token_digest or participant.pk}:{int(now.timestamp()) // 60}"


def batch_search(batch: Batch, state: SessionState, text: str, page: int) -> SearchPage:
    """A page of results of the session's system, once the caps allow it (the endpoints only). An HTTP
    system's page was fetched before the transaction (http_page); one that failed is "retry later"."""
    if batch.capped:
        search_allow(batch, state)
    system = batch.systems.get(state.system_id)
    if system is None:
        system = batch.systems[state.system_id] = system_build(batch, state.system_id)
    if system.backend == System.Backend.HTTP:
        result = http_page(batch, system, text, page)
    else:
        # The numbers read with the locks serve the study's own systems (their collection is the study's).
        versions = batch.index_versions if system.study_id == batch.study.id else None
        result = system_search(system=system, query=text, page=page, versions=versions)  # unavailable: builds
    if result.unavailable:
        batch.waiting.add(state.id)  # its later events wait behind it, as behind a cap
        raise RetryLater(SYSTEM_AWAY)
    if result.detail:
        logger.info("session %s query %r page %d: %s", state.id, text, page, result.detail)
    return result


def http_page(batch: Batch, system: System, text: str, page: int) -> SearchPage:
    """The HTTP system's page fetched before this pass; else noted in batch.http_needs and answered with a
    stand-in (the shell rolls this pass back, fetches, runs the batch again), or, on the last pass,
    unavailable."""
    key = (system.pk, text, page)
    fetched = batch.http_pages.get(key)
    if fetched is not None:
        return fetched
    if batch.http_last_pass:
        return unavailable_page(page, PAGE_SIZE, "not fetched before the batch")
    batch.http_needs[key] = system
    return SearchPage([], None, page, page_size=PAGE_SIZE)


def http_pages_fetch(needs: dict[tuple[int, str, int], System], pages: dict) -> None:
    """Fetch the pages a pass needed, outside any transaction (ingest.py): nothing is locked while an engine
    takes its time. A system that fails is not called again for the rest of the batch."""
    failed: set[int] = set()
    for key, system in needs.items():
        system_id, text, page = key
        if system_id in failed:
            pages[key] = unavailable_page(page, PAGE_SIZE, "failed earlier in the batch")
            continue
        pages[key] = system_search(system=system, query=text, page=page)
        if pages[key].unavailable:
            failed.add(system_id)


def search_allow(batch: Batch, state: SessionState) -> None:
    """Raises RetryLater past the batch's or the minute's share of searches (settings EVENTS_SEARCHES_*);
    the count is in the cache, read once a batch and written after its commit (searches_count)."""
    per_batch = settings.EVENTS_SEARCHES_PER_BATCH
    if batch.minute_left is None:
        try:
            used = cache.get(minute_key(batch.participant, batch.now)) or 0
        except Exception:  # noqa: BLE001 (a cache that is down, Redis with CACHE_URL: the cap fails open)
            logger.warning("search cap: the cache cannot be read; searches are not counted", exc_info=True)
            used = 0
        batch.minute_left = settings.EVENTS_SEARCHES_PER_MINUTE - used
    if batch.searches >= per_batch or batch.searches >= batch.minute_left:
        batch.waiting.add(state.id)
        raise RetryLater(
            TOO_MANY.format(limit=per_batch, scope="a batch")
            if batch.searches >= per_batch
            else TOO_MANY.format(limit=settings.EVENTS_SEARCHES_PER_MINUTE, scope="a minute")
        )
    batch.searches += 1


def searches_count(batch: Batch) -> None:
    """Add the batch's searches to the participant's count for this minute (after the commit)."""
    if not batch.searches:
        return
    key = minute_key(batch.participant, batch.now)
    try:
        cache.add(key, 0, 120)
        try:
            cache.incr(key, batch.searches)
        except ValueError:  # expired between the two calls
            cache.set(key, batch.searches, 120)
    except Exception:  # noqa: BLE001 (the batch is stored: a cache that is down only goes uncounted)
        logger.warning("search cap: the cache cannot be written", exc_info=True)


def system_build(batch: Batch, system_id: int) -> System:
    """The session's system (read with the session), with the participant's study (and its collection's id)
    as its study."""
    study_id, code, name, backend, config = batch.system_rows[system_id]
    system = System.from_db(
        "default",
        ["id", "study_id", "code", "name", "backend", "config"],
        [
            system_id,
            study_id,
            code,
            name,
            backend,
            json.loads(config) if isinstance(config, str) else config,
        ],
    )
    if study_id == batch.study.id:
        if batch.study.collection_id is not None and not plain_sql.is_loaded(batch.study, "collection"):
            batch.study.collection = Collection.from_db("default", ["id"], [batch.study.collection_id])
        system.study = batch.study
    return system
