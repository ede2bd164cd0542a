"""The search page's events, a batch at a time: the one implementation of queries, result pages, document
views, judgments, scan marks and session ends (the services in participation.py are batches of one).

A batch is read and written in one transaction, and every statement serves the whole batch: the participant's
sessions named in the batch are read and locked (SELECT ... FOR UPDATE, so a beacon and a fetch carrying the
same events are served one after the other), the stored events among the batch's ids are read once, each
session's queries and shown results once, and the writes (shown results, judgments, Events) go together at the
end. On PostgreSQL a batch with a query costs three round trips and the COMMIT: the reads (with the BEGIN),
the query's insert with its results' documents, the writes. Events are checked and applied in order against
that state in memory, so an event may refer to one earlier in the same batch (a document opened from the query
just logged). A re-sent event answers its stored acknowledgement and builds nothing. A refused event is stored with its refusal (unless the participant declined or withdrew),
so a re-send is refused the same way. docs/performance-load.md gives the figures this design is for.

Times (docs/time-model.md): every row an event builds takes the event's time on its session's timeline (client
time + the session's clock offset, `_Batch.at`). A batch whose clock sample beats a session's estimate moves
that session's derived times first (`clock_apply`: one UPDATE per table, a few times a session). An external
system's query or page reads its documents before the insert (one round trip more), since an unknown one
refuses the event before anything is written.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, OperationalError, connection, transaction
from django.db.models import F
from django.utils import timezone

from sessionlab import plain_sql
from studies.errors import Refused, RetryLater
from studies.models import (
    Collection,
    Document,
    Event,
    Judgment,
    JudgmentChange,
    Query,
    SearchSession,
    ShownResult,
    System,
)
from studies.participation import statements
from studies.participation.clock import Sample, is_better, offset_delta
from studies.participation.event_checks import CLIENT_ID, EventRefused, client_time_checked, event_check
from studies.participation.rules import (
    END_REASONS,
    MAX_BATCH,
    MAX_PAGE,
    TIME_LIMIT_GRACE,
    deadline_at,
    participant_check_active,
    participant_check_consented,
    session_expire_if_due,
    sessions_changed,
)
from studies.search.engines.search import Hit, SearchPage, highlights_checked
from studies.search.systems import system_search

logger = logging.getLogger(__name__)

FINISHED = "This scenario is finished and cannot be worked again."
NOT_YOURS = "This is not one of your search sessions."
NOT_THIS_QUERY = "That query is not part of this search session."
NOT_SHOWN = "That document was not shown in this search session."
QUERY_NOT_YET = "Its query is not stored yet; send it again later."
TOO_MANY = "Send it again later: more than {limit} searches {scope}."
WAITING = "An earlier search of this session is waiting; send it again later."
LOCKED_RETRIES = 4  # SQLite: attempts of a batch that found the database locked (docs/running-a-study.md)


@dataclass
class _Query:
    id: int
    position: int
    text: str
    scan_mark_rank: int | None
    total: int | None = None  # known when its query event is in this batch
    ranks: set[int] = field(default_factory=set)


@dataclass
class _SessionState:
    """What the checks of a session's events need, read under the session's lock: only what the batch names
    (its documents, its queries), so a batch costs the same in a long session as in a short one."""

    id: int
    started_at: datetime
    ended_at: datetime | None
    system_id: int
    scenario_id: int
    offset_ms: float | None = None  # the client's clock offset (clock.py), after this batch's sample
    delay_ms: float | None = None
    queries: dict[int, _Query] = field(default_factory=dict)  # by position: those the batch names, or logs
    pages: dict[tuple[int, int], list[dict]] = field(
        default_factory=dict
    )  # (query id, page) -> shown results
    shown: dict[str, int] = field(
        default_factory=dict
    )  # external id -> document pk, of those the batch names
    texts: dict[int, dict] = field(default_factory=dict)  # document pk -> {"doc", "title", "text"}
    judgments: dict[int, tuple[int, int]] = field(default_factory=dict)  # document pk -> (judgment id, grade)

    def documents_statement(self, collection_id: int, docs: set[str]) -> tuple[str, list]:
        """The documents named, if shown in this session: with their text (an open is answered with it, without
        another round trip) and this session's judgment of them."""
        return statements.session_documents(self.id, collection_id, docs)

    def documents_load(self, rows) -> None:
        for external_id, document_id, title, text, judgment_id, grade in rows:
            self.shown[external_id] = document_id
            self.texts[document_id] = {"doc": external_id, "title": title, "text": text}
            if judgment_id is not None:
                self.judgments[document_id] = (judgment_id, grade)

    def queries_statement(self, participant_id: int, positions: set[int], refs: set[str]) -> tuple[str, list]:
        """The queries named, by position or by the client id of their query event (stored in an earlier batch,
        its acknowledgement holds the position), with their shown results."""
        return statements.session_queries(self.id, participant_id, positions, refs)

    def queries_load(self, rows) -> None:
        for (
            query_id,
            position,
            text,
            mark,
            rank,
            page,
            document_id,
            external_id,
            title,
            snippet,
            body,
        ) in rows:
            query = self.queries.get(position)
            if query is None:
                query = self.queries[position] = _Query(query_id, position, text, mark)
            if rank is not None:
                _shown_add(self, query, rank, page, document_id, external_id, title, snippet, body)


def _shown_add(
    state, query, rank, page, document_id, external_id, title, snippet, text, highlights=()
) -> None:
    """A shown result, as the page gets it: with its document's text, so opening it needs no round trip, and
    the system's highlights ([start, end] in the snippet) when it gave some (the page guesses otherwise)."""
    query.ranks.add(rank)
    result = {"rank": rank, "doc": external_id, "title": title, "snippet": snippet, "text": text}
    highlights = highlights_checked(list(highlights), snippet or "")
    if highlights:
        result["highlights"] = [list(pair) for pair in highlights]
    state.pages.setdefault((query.id, page), []).append(result)
    state.shown.setdefault(external_id, document_id)


_EVENT_COLUMNS = (
    "participant",
    "session",
    "type",
    "client_event_id",
    "sequence",
    "client_time",
    "server_time",
    "payload",
)


def _int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _session_id(raw: Mapping) -> int | None:
    """The session a raw event names, as the page sends it (a number, or its ASCII digits); None for anything
    else, a number too long for an id included (SQLite cannot even compare one)."""
    value = raw.get("session")
    text = str(value) if _int(value) or isinstance(value, str) else ""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else None


def _minute_key(participant, now: datetime) -> str:
    """The cache key counting a participant's searches in this minute: by their token's digest (a database id
    may come back after a rollback, a token does not)."""
    return f"events:searches:{participant.access_token_digest or participant.pk}:{int(now.timestamp()) // 60}"


def _times_shift(session_id: int, delta: timedelta) -> None:
    """Move every time derived from a session's events by `delta` (its clock offset changed): they stay on one
    timeline, client time + the offset (clock.py). Only when a better estimate arrives, a few times a session."""
    SearchSession.objects.filter(pk=session_id).update(
        started_at=F("started_at") + delta, ended_at=F("ended_at") + delta
    )
    Query.objects.filter(session_id=session_id).update(issued_at=F("issued_at") + delta)
    ShownResult.objects.filter(query__session_id=session_id).update(shown_at=F("shown_at") + delta)
    Judgment.objects.filter(session_id=session_id).update(
        created_at=F("created_at") + delta, updated_at=F("updated_at") + delta
    )
    JudgmentChange.objects.filter(judgment__session_id=session_id).update(changed_at=F("changed_at") + delta)


MAX_RESULTS = 1000  # results an external system's event may log (data.results)
MAX_RESULT_TEXT = 10_000  # characters of a logged title or snippet


RESULT_KEYS = {"doc", "title", "snippet", "highlights"}


def _external_results(data: Mapping, first_rank: int) -> list[tuple]:
    """The ranked list an external front-end showed (`data.results`: doc ids, or {doc, title?, snippet?,
    highlights?}), as (doc, rank, title, snippet, highlights); raises Refused naming the field and position of
    the first item it cannot be. Highlights are checked pair by pair, a bad pair dropped (highlights_checked)."""
    results = data.get("results")
    if not isinstance(results, list) or not results:
        raise Refused(
            "data.results: the list of results the front-end showed (document ids, or objects "
            "{doc, title, snippet}), at least one"
        )
    if len(results) > MAX_RESULTS:
        raise Refused(f"data.results: at most {MAX_RESULTS} results an event")
    out = []
    for n, item in enumerate(results):
        where = f"data.results.{n}"
        title = snippet = None
        highlights = ()
        if isinstance(item, dict):
            doc = item.get("doc")
            title, snippet = item.get("title"), item.get("snippet")
            for name, value in (("title", title), ("snippet", snippet)):
                if value is not None and (not isinstance(value, str) or len(value) > MAX_RESULT_TEXT):
                    raise Refused(f"{where}.{name}: text of at most {MAX_RESULT_TEXT} characters")
            if set(item) - RESULT_KEYS:
                raise Refused(
                    f"{where}: only doc, title, snippet and highlights "
                    f"({', '.join(sorted(set(item) - RESULT_KEYS))} given)"
                )
            highlights = highlights_checked(item.get("highlights"), snippet or "")
            where += ".doc"
        else:
            doc = item
        if not isinstance(doc, str) or not doc or len(doc) > 200:
            raise Refused(f"{where}: a document id (text of 1 to 200 characters)")
        out.append((doc, first_rank + n, title, snippet, highlights))
    return out


class _Batch:
    def __init__(
        self, participant, *, store_refusals: bool, capped: bool = False, clock_sample: Sample | None = None
    ):
        self.participant = participant
        self.clock_sample = clock_sample  # this batch's estimate of the client's clock offset (clock.py)
        self.study = participant.study
        self.store_refusals = store_refusals
        # Searches are capped per batch and per participant per minute (the endpoints only, not the services).
        self.capped = capped
        self.searches = 0
        self.minute_left: int | None = None  # read from the cache at the batch's first search
        self.waiting: set[int] = set()  # sessions with a search told to wait: their later events wait too
        self.sessions: dict[int, _SessionState] = {}
        self.stored: dict[str, tuple[str, int | None, dict]] = {}  # client id -> (type, session id, ack)
        self.rows: list[tuple] = []  # the new Events (_EVENT_COLUMNS)
        # Writes whose results no later statement of the batch reads (the state in memory answers): they go to
        # the database together at the end, in one round trip on PostgreSQL (plain_sql.run_all).
        self.writes: list[tuple[str, list]] = []
        # Judgments are written with the batch's Events: new ones inserted, changed ones updated, each change kept.
        # Each with the participant's action time on the session's timeline (`at`), not the batch's arrival.
        self.judgments_new: dict[
            tuple[int, int], tuple
        ] = {}  # (session id, document id) -> (grade, created, at)
        self.judgments_changed: dict[int, tuple] = {}  # judgment id -> (grade, at)
        self.judgment_changes: list[
            tuple[tuple[int, int], int, datetime]
        ] = []  # ((session, document), grade, at)
        self.now = timezone.now()
        self._grades: list[int] | None = None
        self.systems: dict[int, System] = {}
        self.system_rows: dict[int, tuple] = {}  # system id -> (study id, code, name, backend, config)

    # --- reading --------------------------------------------------------------------------------------

    def read(self, events: list[Mapping]) -> None:
        """Lock the participant's sessions the batch names; read the stored events it names, and of each session
        the documents and queries it names: all in one round trip on PostgreSQL (plain_sql.rows_together), the
        lock first, so that the reads after it see what a batch that held it before has stored."""
        names = {e["id"] for e in events}
        needs: dict[
            int, tuple[set[str], set[int], set[str]]
        ] = {}  # session id -> (docs, positions, query refs)
        for e in events:
            data = e["data"] if isinstance(e.get("data"), dict) else {}
            ref = data.get("query_event")
            if isinstance(ref, str) and ref:
                names.add(ref)
            session_id = _session_id(e)
            if session_id is None:
                continue
            docs, positions, refs = needs.setdefault(session_id, (set(), set(), set()))
            if "doc" in data:
                docs.add(str(data["doc"]))
            if e["type"] in ("results_page", "scan_mark"):  # the only events that check a query's results
                if isinstance(ref, str) and ref:
                    refs.add(ref)
                elif _int(data.get("query")):
                    positions.add(data["query"])
        stored = statements.events_stored(self.participant.pk, names)
        if not needs:
            self._stored_load(plain_sql.rows(*stored))
            return
        batch_statements = [statements.sessions_locked(needs, self.participant.pk), stored]
        # Another participant's session is read here too, and dropped below: the lock's read names only theirs.
        named, loads = {}, []
        for session_id, (docs, positions, refs) in needs.items():
            state = named[session_id] = _SessionState(
                session_id, None, None, 0, 0
            )  # the lock's row fills the rest
            if docs:
                batch_statements.append(state.documents_statement(self.study.collection_id, docs))
                loads.append(state.documents_load)
            if positions or refs:
                batch_statements.append(state.queries_statement(self.participant.pk, positions, refs))
                loads.append(state.queries_load)
        locked, stored_rows, *named_rows = plain_sql.rows_together(batch_statements)
        self._stored_load(stored_rows)
        for load, rows in zip(loads, named_rows, strict=True):
            load(rows)
        for (
            session_id,
            started_at,
            ended_at,
            offset_ms,
            delay_ms,
            system_id,
            scenario_id,
            *system,
            grades,
        ) in locked:
            self.system_rows[system_id] = tuple(system)
            if self._grades is None:
                self._grades = sorted(int(value) for value in (grades or "").split(",") if value)
            state = self.sessions[session_id] = named[session_id]
            state.started_at, state.ended_at = plain_sql.aware(started_at), plain_sql.aware(ended_at)
            state.system_id, state.scenario_id = system_id, scenario_id
            state.offset_ms, state.delay_ms = offset_ms, delay_ms
            self.clock_apply(state)
            deadline = deadline_at(state.started_at, self.study.time_limit_minutes)
            if ended_at is None and deadline and self.now >= deadline + TIME_LIMIT_GRACE:
                # past its time: the service ends it (timed_out), once
                session = SearchSession.objects.select_related("assignment__participant__study").get(
                    pk=session_id
                )
                if session_expire_if_due(session=session, now=self.now):
                    state.ended_at = session.ended_at

    def clock_apply(self, state: _SessionState) -> None:
        """Take this batch's clock sample if it is better than the session's estimate; the session's derived
        times move by the change, before any of the batch's events is applied (clock.py)."""
        sample = self.clock_sample
        if sample is None or not is_better(sample, state.offset_ms, state.delay_ms):
            return
        delta = offset_delta(sample.offset_ms) - offset_delta(state.offset_ms)
        SearchSession.objects.filter(pk=state.id).update(
            clock_offset_ms=sample.offset_ms, clock_delay_ms=sample.delay_ms
        )
        if delta:
            _times_shift(state.id, delta)
            state.started_at += delta
            state.ended_at = state.ended_at + delta if state.ended_at is not None else None
        state.offset_ms, state.delay_ms = sample.offset_ms, sample.delay_ms

    def at(self, raw: Mapping, state: _SessionState) -> datetime:
        """When the event happened, on its session's timeline: its client time + the session's offset, or the
        server's receive time when it sent none or one refused (clock.py)."""
        moment, _, _ = client_time_checked(
            raw.get("time"),
            received_at=self.now,
            window=timedelta(seconds=settings.CLIENT_TIME_WINDOW_SECONDS),
        )
        return self.now if moment is None else moment + offset_delta(state.offset_ms)

    def _stored_load(self, rows) -> None:
        for client_id, type_, session_id, payload in rows:
            payload = json.loads(payload) if isinstance(payload, str | bytes) else payload
            self.stored[client_id] = (type_, session_id, payload.get("ack") or {"ok": True})

    def grades(self) -> list[int]:
        if self._grades is None:
            self._grades = [value for (value,) in plain_sql.rows(*statements.grade_values(self.study.id))]
        return self._grades

    # --- checks ---------------------------------------------------------------------------------------

    def state(self, raw: Mapping) -> _SessionState:
        state = self.sessions.get(_session_id(raw))
        if state is None:
            raise Refused(NOT_YOURS)  # the same answer whether it does not exist or is someone else's
        return state

    def open_state(self, raw: Mapping) -> _SessionState:
        state = self.state(raw)
        participant_check_consented(self.participant)
        if state.ended_at is not None:
            raise Refused(FINISHED)
        return state

    def query_position(self, state: _SessionState, data: Mapping):
        """A query named by the client event id of its query event ("query_event") or by its position."""
        ref = data.get("query_event")
        if isinstance(ref, str) and ref:
            stored = self.stored.get(ref)
            if stored is None:  # only the delivery order may be wrong: the page keeps it and sends it again
                raise RetryLater(QUERY_NOT_YET)
            if stored[0] != "query" or stored[1] != state.id or not stored[2].get("ok"):
                raise Refused(NOT_THIS_QUERY)
            return stored[2]["query"]
        return data.get("query")

    @staticmethod
    def query_of(state: _SessionState, position) -> _Query:
        query = state.queries.get(position) if _int(position) else None
        if query is None:
            raise Refused(NOT_THIS_QUERY)
        return query

    @staticmethod
    def shown_document(state: _SessionState, doc) -> int:
        document_id = state.shown.get(str(doc))
        if document_id is None:
            raise Refused(NOT_SHOWN)
        return document_id

    # --- the events -----------------------------------------------------------------------------------

    def apply(self, raw: Mapping) -> dict:
        """Check and apply one new event; returns its acknowledgement (before expansion) or raises Refused."""
        kind = raw["type"]
        data = raw["data"] if isinstance(raw.get("data"), dict) else {}
        if self.waiting and _session_id(raw) in self.waiting:
            raise RetryLater(WAITING)  # in order behind the search that waits
        handler = getattr(self, f"_on_{kind}", None) if kind in HANDLED else None
        if handler is not None:
            return handler(raw, data)
        # Anything else the page reports (tab hidden, time warnings...) is logged as it came, building no rows.
        participant_check_active(self.participant)
        state = self.state(raw) if raw.get("session") is not None else None
        return self.log(raw, state, data, {"ok": True})

    def log(self, raw, state: _SessionState | None, data: dict, ack: dict, kind: str | None = None) -> dict:
        sequence = raw.get("seq")  # event_check keeps it within the column
        client_time, time_text, _ = client_time_checked(
            raw.get("time"),
            received_at=self.now,
            window=timedelta(seconds=settings.CLIENT_TIME_WINDOW_SECONDS),
        )
        if time_text is not None:  # never a timestamp: the raw text only
            data = {**data, "client_time_raw": time_text}
        if raw.get("normalized"):  # the text was cleaned (event_checks.text_clean): the log says where
            data = {**data, "normalized": raw["normalized"]}
            ack = {**ack, "normalized": raw["normalized"]}
        self.rows.append(
            (
                self.participant.pk,
                state.id if state else None,
                kind or raw["type"],
                raw["id"],
                sequence if _int(sequence) and sequence >= 0 else None,
                client_time,
                self.now,
                {"data": data, "ack": ack},
            )
        )
        self.stored[raw["id"]] = (kind or raw["type"], state.id if state else None, ack)
        return ack

    def external(self, state: _SessionState) -> bool:
        """Whether the session's system is a researcher's own front-end: its events carry what it showed, and
        SessionLab's engine is never run for it."""
        return self.system_rows[state.system_id][3] == System.Backend.EXTERNAL

    def external_page(self, data: Mapping, page: int, first_rank: int, text: str) -> SearchPage:
        """The results an external front-end logged, checked against the study's collection item by item."""
        results = _external_results(data, first_rank)
        total = data.get("total")
        # A title not given is None: _shown_store gives the document's own.
        return SearchPage(
            [
                Hit(doc, rank, None, title, snippet or "", highlights)
                for doc, rank, title, snippet, highlights in results
            ],
            total if _int(total) and 0 <= total <= 2**31 - 1 else None,
            page,
            query_used=None,
        )

    def external_documents(self, result: SearchPage) -> list[tuple]:
        """documents_statement's rows for an external page, read before anything is written: a document the
        collection does not hold refuses the event, naming its position."""
        rows = plain_sql.rows(
            *statements.collection_documents(self.study.collection_id, {h.doc_id for h in result.results})
        )
        known = {row[0] for row in rows}
        for n, hit in enumerate(result.results):
            if hit.doc_id not in known:
                raise Refused(f"data.results.{n}: {hit.doc_id!r} is not a document of the study's collection")
        return rows

    def _search(self, state: _SessionState, text: str, page: int):
        if self.capped:
            self.search_allow(state)
        system = self.systems.get(state.system_id)
        if system is None:
            system = self.systems[state.system_id] = self.system_build(state.system_id)
        result = system_search(system=system, query=text, page=page)
        if result.detail:
            logger.info("session %s query %r page %d: %s", state.id, text, page, result.detail)
        return result

    def search_allow(self, state: _SessionState) -> None:
        """Raises RetryLater past the batch's or the minute's share of searches (settings EVENTS_SEARCHES_*);
        the count is in the cache, read once a batch and written after its commit (searches_count)."""
        per_batch = settings.EVENTS_SEARCHES_PER_BATCH
        if self.minute_left is None:
            try:
                used = cache.get(_minute_key(self.participant, self.now)) or 0
            except Exception:  # noqa: BLE001 (a cache that is down, Redis with CACHE_URL: the cap fails open)
                logger.warning(
                    "search cap: the cache cannot be read; searches are not counted", exc_info=True
                )
                used = 0
            self.minute_left = settings.EVENTS_SEARCHES_PER_MINUTE - used
        if self.searches >= per_batch or self.searches >= self.minute_left:
            self.waiting.add(state.id)
            raise RetryLater(
                TOO_MANY.format(limit=per_batch, scope="a batch")
                if self.searches >= per_batch
                else TOO_MANY.format(limit=settings.EVENTS_SEARCHES_PER_MINUTE, scope="a minute")
            )
        self.searches += 1

    def searches_count(self) -> None:
        if not self.searches:
            return
        key = _minute_key(self.participant, self.now)
        try:
            cache.add(key, 0, 120)
            try:
                cache.incr(key, self.searches)
            except ValueError:  # expired between the two calls
                cache.set(key, self.searches, 120)
        except Exception:  # noqa: BLE001 (the batch is stored: a cache that is down only goes uncounted)
            logger.warning("search cap: the cache cannot be written", exc_info=True)

    def system_build(self, system_id: int) -> System:
        """The session's system (read with the session), with the participant's study (and its collection's id)
        as its study."""
        study_id, code, name, backend, config = self.system_rows[system_id]
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
        if study_id == self.study.id:
            if self.study.collection_id is not None and not plain_sql.is_loaded(self.study, "collection"):
                self.study.collection = Collection.from_db("default", ["id"], [self.study.collection_id])
            system.study = self.study
        return system

    def documents_statement(self, result) -> tuple[str, list]:
        """The documents of a page of results (their keys and text); a statement that matches none if empty."""
        return statements.collection_documents(self.study.collection_id, {h.doc_id for h in result.results})

    def _shown_store(
        self, state: _SessionState, query: _Query, result, page: int, document_rows, shown_at: datetime
    ) -> None:
        """Store the results of a page as shown (and keep them in the state for later events and the answer);
        `document_rows`: what documents_statement(result) read. A result without a title (an external
        front-end's bare id) gets its document's."""
        documents = {external_id: (pk, text, title) for external_id, pk, text, title in document_rows}
        rows = []
        for hit in result.results:
            if hit.doc_id not in documents:
                # An HTTP system answered with a document the study's collection does not hold.
                logger.warning(
                    "query %s: result %r at rank %d is not in the collection; not shown",
                    query.id,
                    hit.doc_id,
                    hit.rank,
                )
                continue
            document_id, text, document_title = documents[hit.doc_id]
            title = hit.title if hit.title is not None else document_title
            rows.append((query.id, hit.rank, document_id, title, hit.snippet, page, shown_at))
            _shown_add(
                state,
                query,
                hit.rank,
                page,
                document_id,
                hit.doc_id,
                title,
                hit.snippet,
                text,
                hit.highlights,
            )
        self.writes += plain_sql.insert_statements(
            ShownResult, ("query", "rank", "document", "title", "snippet", "page", "shown_at"), rows
        )
        state.pages.setdefault((query.id, page), [])

    def _on_query(self, raw, data):
        state = self.open_state(raw)
        text = " ".join(str(data.get("text", "")).split())[:1000]
        if not text:
            raise Refused("Please type some words to search for.")
        at = self.at(raw, state)
        if self.external(state):
            # What the researcher's front-end showed, checked before anything is written; no search is run.
            result = self.external_page(data, 1, 1, text)
            documents = self.external_documents(result)
            [(query_id, position)] = plain_sql.rows(*statements.query_insert(state.id, text, at, ""))
            logged = {"text": text, "results": data["results"]}
        else:
            result = self._search(state, text, 1)
            # The next position and the insert in one statement (the session's lock keeps positions in order),
            # in one round trip with the read of the results' documents.
            [(query_id, position)], documents = plain_sql.rows_together(
                [
                    statements.query_insert(state.id, text, at, result.error or ""),
                    self.documents_statement(result),
                ]
            )
            logged = {"text": text}
        message = result.error or ""
        query = state.queries[position] = _Query(query_id, position, text, None, total=result.total)
        self._shown_store(state, query, result, 1, documents, at)
        ack = {
            "ok": True,
            "query": position,
            "query_id": query.id,
            "page": 1,
            "total": result.total,
            "message": message,
            "query_used": result.query_used,
            **_marks(state, query, 1),
        }
        return self.log(raw, state, logged, ack)

    def open_query(self, raw, data) -> tuple[_SessionState, _Query]:
        """The open session and the query a page or a scan mark is about (named before the session is checked
        open, so a wrong query is refused as such even in a finished session)."""
        state = self.state(raw)
        position = self.query_position(state, data)
        self.open_state(raw)
        return state, self.query_of(state, position)

    def _on_results_page(self, raw, data):
        state, query = self.open_query(raw, data)
        page = data.get("page")
        if not _int(page) or not 1 <= page <= MAX_PAGE:
            raise Refused(f"Pages are numbered 1 to {MAX_PAGE}.")
        logged = {"query": query.position, "page": page}
        marks = {}
        if (query.id, page) in state.pages:  # shown before: served from what was stored
            total, message = self.query_total(query), ""
            marks = _marks(state, query, page) or self.query_marks(query, page)
        else:
            if self.external(state):  # the front-end's next page: its ranks follow the query's last one
                result = self.external_page(data, page, max(query.ranks, default=0) + 1, query.text)
                documents = self.external_documents(result)
                logged["results"] = data["results"]
            else:
                result = self._search(state, query.text, page)
                documents = plain_sql.rows(*self.documents_statement(result))
            self._shown_store(state, query, result, page, documents, self.at(raw, state))
            total = result.total if result.total is not None else self.query_total(query)
            message = result.error or ""
            marks = _marks(state, query, page)
        ack = {
            "ok": True,
            "query": query.position,
            "query_id": query.id,
            "page": page,
            "total": total,
            "message": message,
            **marks,
        }
        return self.log(raw, state, logged, ack)

    def query_marks(self, query: _Query, page: int) -> dict:
        """The highlights of a page shown in an earlier batch, as its first acknowledgement kept them."""
        for payload in (
            Event.objects.filter(
                participant=self.participant,
                payload__ack__query_id=query.id,
                payload__ack__page=page,
                payload__ack__has_key="highlights",
            )
            .order_by("id")
            .values_list("payload", flat=True)[:1]
        ):
            return {"highlights": (payload.get("ack") or {}).get("highlights")}
        return {}

    def query_total(self, query: _Query) -> int | None:
        """The total the system reported for this query (kept in the acknowledgement of its query event)."""
        if query.total is None:
            for payload in (
                Event.objects.filter(participant=self.participant, payload__ack__query_id=query.id)
                .order_by("-id")
                .values_list("payload", flat=True)
            ):
                query.total = (payload.get("ack") or {}).get("total")
                if query.total is not None:
                    break
        return query.total

    def _on_document_open(self, raw, data):
        return self._document(raw, data, "open")

    def _on_document_close(self, raw, data):
        return self._document(raw, data, "close")

    def _document(self, raw, data, action):
        """Only documents shown in this session can be opened; a close is logged even after the session ended,
        so the dwell time of a document open at the stop is kept."""
        state = self.state(raw)
        position = self.query_position(state, data)
        if action == "open":
            self.open_state(raw)
        else:
            participant_check_consented(self.participant)
        doc = str(data.get("doc", ""))
        document_id = self.shown_document(state, doc)
        logged = {"doc": doc, "query": position, "rank": data.get("rank")}
        if action == "close":
            dwell_ms = data.get("dwell_ms")
            if dwell_ms is not None and (
                not isinstance(dwell_ms, int | float) or isinstance(dwell_ms, bool) or dwell_ms < 0
            ):
                raise Refused("The dwell time must be a non-negative number of milliseconds.")
            logged["dwell_ms"] = None if dwell_ms is None else int(dwell_ms)
        ack = {"ok": True, "doc": doc}
        if action == "open":
            ack["open_document_id"] = document_id
        return self.log(raw, state, logged, ack)

    def _on_judgment(self, raw, data):
        """The Judgment holds the current grade; every change is kept in JudgmentChange."""
        state = self.open_state(raw)
        grade = data.get("grade")
        scale = self.grades()
        if not _int(grade) or grade not in scale:
            raise Refused(f"A grade is one of {', '.join(str(g) for g in scale)}.")
        if data.get("query_event"):  # the query that showed it: stored yet, or the judgment waits for it
            self.query_position(state, data)
        doc = str(data.get("doc", ""))
        document_id = self.shown_document(state, doc)
        judgment_id, previous = state.judgments.get(document_id, (None, None))
        if previous != grade:
            at = self.at(raw, state)  # the participant's action, not the batch's arrival
            if judgment_id is None:
                created_at = self.judgments_new.get((state.id, document_id), (None, at))[1]
                self.judgments_new[(state.id, document_id)] = (grade, created_at, at)
            else:
                self.judgments_changed[judgment_id] = (grade, at)
            state.judgments[document_id] = (judgment_id, grade)
            self.judgment_changes.append(((state.id, document_id), grade, at))
        ack = {"ok": True, "doc": doc, "grade": grade, "previous": previous}
        return self.log(raw, state, {"doc": doc, "grade": grade}, ack)

    def _on_scan_mark(self, raw, data):
        """ "I stopped scanning here": the query keeps the deepest rank marked."""
        state, query = self.open_query(raw, data)
        rank = data.get("rank")
        if not _int(rank) or rank not in query.ranks:
            raise Refused("Mark a result that was shown for this query.")
        if query.scan_mark_rank is None or query.scan_mark_rank < rank:
            self.writes.append(statements.scan_mark_update(query.id, rank))
            query.scan_mark_rank = rank
        ack = {"ok": True, "query": query.position, "rank": rank}
        return self.log(raw, state, {"query": query.position, "rank": rank}, ack)

    def _on_session_end(self, raw, data):
        """ "satisfied" (I found what I need), "gave_up", or "timed_out" (the time limit ran out)."""
        state = self.state(raw)
        reason = str(data.get("reason", ""))
        if reason not in END_REASONS:
            raise Refused("A search ends as satisfied, gave_up or timed_out.")
        if reason == SearchSession.EndReason.TIMED_OUT and not self.study.time_limit_minutes:
            raise Refused("This study has no time limit.")
        self.open_state(raw)
        deadline = deadline_at(state.started_at, self.study.time_limit_minutes)
        at = self.at(raw, state)
        ended_at = min(at, deadline) if reason == SearchSession.EndReason.TIMED_OUT and deadline else at
        ended_at = max(ended_at, state.started_at)  # a client clock that stepped back: never before the start
        SearchSession.objects.filter(pk=state.id, ended_at__isnull=True).update(
            ended_at=ended_at, end_reason=reason
        )
        state.ended_at = ended_at
        sessions_changed(self.participant.study_id, [state.id], [state.scenario_id])
        return self.log(raw, state, {"reason": reason}, {"ok": True, "reason": reason})

    def judgments_write(self) -> None:
        """The batch's judgments: the new ones in one statement, one update per changed one, and the history,
        each change naming its judgment by (session, document) so that no statement waits on another's ids."""
        self.writes += plain_sql.insert_statements(
            Judgment,
            ("session", "document", "grade", "created_at", "updated_at"),
            [
                (*key, grade, created_at, updated_at)
                for key, (grade, created_at, updated_at) in self.judgments_new.items()
            ],
        )
        for judgment_id, (grade, updated_at) in self.judgments_changed.items():
            self.writes.append(statements.judgment_update(judgment_id, grade, updated_at))
        self.writes += statements.judgment_changes_insert(self.judgment_changes)

    def refused(self, raw: Mapping, refusal: Refused) -> dict:
        ack = {"ok": False, "refused": refusal.message}
        if self.participant.withdrawn_at is not None or self.participant.declined_at is not None:
            return ack  # nothing is recorded about them
        state = self.sessions.get(_session_id(raw))
        data = raw["data"] if isinstance(raw.get("data"), dict) else {}
        return self.log(raw, state, data, ack)

    # --- answering ------------------------------------------------------------------------------------

    def expand(self, acks: list[dict]) -> list[dict]:
        """Acknowledgements with what they point to: the results of a page, the text of a document opened."""
        pages = {}
        for state in self.sessions.values():
            pages.update(state.pages)
        documents = {}
        for state in self.sessions.values():
            documents.update(state.texts)
        wanted = {a["open_document_id"] for a in acks if a.get("ok") and a.get("open_document_id")} - set(
            documents
        )
        if wanted:  # replays of opens from earlier batches
            documents.update(
                {
                    d["pk"]: {"doc": d["external_id"], "title": d["title"], "text": d["text"]}
                    for d in Document.objects.filter(pk__in=wanted).values(
                        "pk", "external_id", "title", "text"
                    )
                }
            )
        out = []
        for ack in acks:
            ack = dict(ack)
            marks = ack.pop("highlights", None)  # kept in the event's stored answer, sent inside the results
            if ack.get("ok") and "query_id" in ack and "page" in ack:
                key = (ack["query_id"], ack["page"])
                ack["results"] = results_marked(pages[key] if key in pages else _results(*key), marks)
            if ack.get("ok") and ack.get("open_document_id") in documents:
                ack["document"] = documents[ack["open_document_id"]]
            out.append(ack)
        return out


HANDLED = {"query", "results_page", "document_open", "document_close", "judgment", "scan_mark", "session_end"}


def _marks(state, query, page: int) -> dict:
    """A page's highlights by rank, for the event's stored answer ({"highlights": {"3": [[s, e], ...]}}, none
    when no result has any): a replay or a revisit of the page answers with them, as the first answer did
    (ShownResult keeps no highlights)."""
    marks = {
        str(r["rank"]): r["highlights"] for r in state.pages.get((query.id, page), ()) if "highlights" in r
    }
    return {"highlights": marks} if marks else {}


def results_marked(results: list[dict], marks) -> list[dict]:
    if not isinstance(marks, dict):
        return results
    out = []
    for result in results:
        pairs = highlights_checked(marks.get(str(result["rank"])), result.get("snippet") or "")
        out.append({**result, "highlights": [list(p) for p in pairs]} if pairs else result)
    return out


def _results(query_id: int, page: int) -> list[dict]:
    rows = (
        ShownResult.objects.filter(query_id=query_id, page=page)
        .order_by("rank")
        .values_list("rank", "document__external_id", "title", "snippet", "document__text")
    )
    return [
        {"rank": rank, "doc": doc, "title": title, "snippet": snippet, "text": text}
        for rank, doc, title, snippet, text in rows
    ]


def _id_of(raw) -> str | None:
    """The id an answer about a refused event carries: the event's own when it is a client event id, else None
    (an answer never echoes a malformed one: half an emoji cannot even be written as UTF-8)."""
    cid = raw.get("id") if isinstance(raw, Mapping) else None
    return cid if isinstance(cid, str) and CLIENT_ID.match(cid) else None


def batch_ingest(
    *,
    participant,
    events: Sequence[Mapping],
    store_refusals: bool = True,
    capped: bool = False,
    clock_sample: Sample | None = None,
) -> list[dict]:
    """Store a batch of client events in order, each once by its client event id, and answer one
    acknowledgement per event: {"id", "ok": true, ...} when stored (now or before), {"id", "ok": false,
    "refused": message} when refused (stored too, so a re-send gets the same answer), {"id", "ok": false,
    "error": message} for an event the log cannot hold (studies/participation/event_checks.py: checked before any SQL, not
    stored; the same event always gets the same answer), or {"id", "ok": false, "retry_later": message} for an
    event to send again (its query is not stored yet, a search past the caps, past the batch's MAX_BATCH
    events; nothing stored). A withdrawn participant's events are refused and not stored. With
    store_refusals=False (the services) anything but a success raises Refused and nothing is stored. capped
    (the endpoints): searches are capped per batch and per minute. clock_sample: the batch's estimate of the
    client's clock offset (clock.sample_read), taken by the sessions it names where it is better."""
    answers: list[dict | None] = []
    valid = []
    for n, raw in enumerate(events):
        if n >= MAX_BATCH:  # said, never silently dropped
            answers.append(
                {
                    "id": _id_of(raw),
                    "ok": False,
                    "retry_later": f"A batch holds at most {MAX_BATCH} events; send this one again.",
                }
            )
            continue
        try:
            valid.append(event_check(raw))
            answers.append(None)
        except EventRefused as refusal:
            answers.append({"id": _id_of(raw), "ok": False, "error": str(refusal)})
    if not store_refusals and len(valid) < len(answers):
        raise Refused(next(a.get("error") or a.get("retry_later") for a in answers if a is not None))
    if participant.withdrawn_at is not None:
        refusal = "You have withdrawn from this study; nothing more is recorded."
        if valid and not store_refusals:
            raise Refused(refusal)
        checked = iter(valid)
        return [answer or {"id": next(checked)["id"], "ok": False, "refused": refusal} for answer in answers]
    for attempt in range(1, LOCKED_RETRIES + 1):
        batch = _Batch(participant, store_refusals=store_refusals, capped=capped, clock_sample=clock_sample)
        try:
            with transaction.atomic():
                acks = _batch_apply(batch, valid)
            break
        except IntegrityError:
            # Two requests raced the same event ids outside any session lock (events naming no session): the
            # other one stored them first; answering again replays what it stored.
            if attempt >= 2:
                raise
        except OperationalError as error:
            # SQLite: a write transaction takes its lock at BEGIN (transaction_mode IMMEDIATE) and waits up to
            # its busy timeout; should that run out, the batch is tried again a few times, never answered 500.
            if (
                connection.vendor != "sqlite"
                or "locked" not in str(error)
                or attempt == LOCKED_RETRIES
                or connection.in_atomic_block
            ):
                raise
            time.sleep(0.05 * attempt)
    batch.searches_count()
    expanded = iter(batch.expand(acks))
    checked = iter(valid)
    return [answer or {"id": next(checked)["id"], **next(expanded)} for answer in answers]


def _batch_apply(batch: _Batch, events: list[Mapping]) -> list[dict]:
    if not events:
        return []
    batch.read(events)
    acks = []
    for raw in events:
        stored = batch.stored.get(raw["id"])
        if stored is not None:
            acks.append(stored[2])
            continue
        try:
            acks.append(batch.apply(raw))
        except RetryLater as wait:
            if not batch.store_refusals:
                raise
            acks.append({"ok": False, "retry_later": wait.message})  # not stored: the next try decides
        except Refused as refusal:
            if not batch.store_refusals:
                raise
            acks.append(batch.refused(raw, refusal))
    batch.judgments_write()
    batch.writes += plain_sql.insert_statements(Event, _EVENT_COLUMNS, batch.rows)
    plain_sql.run_all(batch.writes)
    return acks
