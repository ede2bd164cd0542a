"""A batch of the search page's events in memory (ingest.py): what it read under its sessions' locks, what it
has checked, and what it will write at the end; with the checks every event handler shares (whose session,
still open, which query, which shown document) and the log row every event leaves.

The handlers (event_handlers.py) change this state; the reads (ingest_reads.py) fill it; the shell (ingest.py)
writes it. Nothing here runs a statement: the log rows and writes are collected for the shell.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TypeGuard

from django.conf import settings
from django.utils import timezone

from studies.errors import Refused, RetryLater
from studies.models import EventOrigin, System
from studies.participation.events import statements
from studies.participation.events.clock import Sample, offset_delta
from studies.participation.events.event_checks import client_time_checked
from studies.participation.events.rules import participant_check_consented
from studies.search.engines.search import SearchPage, highlights_checked

FINISHED = "This scenario is finished and cannot be worked again."
LOG_FULL = (
    "this participant's log is full: {used} bytes of event data stored, {size} more would pass the"
    " {quota} allowed (EVENTS_BYTES_PER_PARTICIPANT); nothing more is recorded"
)
ID_TAKEN = (
    "id: {id!r} is already an event of yours with another type, session or data; a re-sent event is sent"
    " as it was, a new one takes an id of its own"
)
NOT_YOURS = "This is not one of your search sessions."
NOT_THIS_QUERY = "That query is not part of this search session."
NOT_SHOWN = "That document was not shown in this search session."
QUERY_NOT_YET = "Its query is not stored yet; send it again later."

EVENT_COLUMNS = (
    "participant",
    "session",
    "type",
    "client_event_id",
    "sequence",
    "client_time",
    "server_time",
    "payload",
    "origin",
)


def sent_digest(raw: Mapping) -> str:
    """What identifies an event as the client sent it (its type, session and data, text cleaned), kept in its
    payload (`"sent"`): a re-sent event matches it and is answered what it was; another event under the same
    id does not, and is refused (`Batch.replay`). O(the event's size), once per new event."""
    data_text = raw.get("data_text") or json.dumps(raw.get("data"), sort_keys=True, separators=(",", ":"))
    text = json.dumps([raw["type"], raw.get("session")]) + data_text
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def event_size(raw: Mapping) -> int:
    """The bytes an event's data takes (compact JSON, as event_check wrote it): what the quota counts."""
    return len(raw.get("data_text") or json.dumps(raw.get("data"), sort_keys=True, separators=(",", ":")))


def is_int(value) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def session_id_of(raw: Mapping) -> int | None:
    """The session a raw event names, as the page sends it (a number, or its ASCII digits); None for anything
    else, a number too long for an id included (SQLite cannot even compare one)."""
    value = raw.get("session")
    text = str(value) if is_int(value) or isinstance(value, str) else ""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else None


@dataclass
class QueryState:
    id: int
    position: int
    text: str
    scan_mark_rank: int | None
    total: int | None = None  # known when its query event is in this batch
    ranks: set[int] = field(default_factory=set)


@dataclass
class SessionState:
    """What the checks of a session's events need, read under the session's lock: only what the batch names
    (its documents, its queries), so a batch costs the same in a long session as in a short one."""

    id: int
    started_at: datetime
    ended_at: datetime | None
    system_id: int
    scenario_id: int
    offset_ms: float | None = None  # the client's clock offset (clock.py), after this batch's sample
    delay_ms: float | None = None
    queries: dict[int, QueryState] = field(
        default_factory=dict
    )  # by position: those the batch names, or logs
    # (query id, page) -> shown results
    pages: dict[tuple[int, int], list[dict]] = field(default_factory=dict)
    shown: dict[str, int] = field(
        default_factory=dict
    )  # external id -> document pk, of those the batch names
    texts: dict[int, dict] = field(default_factory=dict)  # document pk -> {"doc", "title", "text"}
    # document pk -> (judgment id, grade); no id yet for a judgment new in this batch
    judgments: dict[int, tuple[int | None, int]] = field(default_factory=dict)


def shown_add(
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


class Batch:
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
        self.sessions: dict[int, SessionState] = {}
        # client id -> (type, session id, ack, digest of the event as sent: sent_digest; None on older rows)
        self.stored: dict[str, tuple[str, int | None, dict, str | None]] = {}
        self.rows: list[tuple] = []  # the new Events (EVENT_COLUMNS)
        # The data those rows hold, in bytes: added to Participant.event_bytes with the batch's writes. The
        # counter read with the participant before the batch may miss a batch stored at the same moment: the
        # quota is passed by one body at most per request in flight (docs/security.md).
        self.bytes_added = 0
        # Writes whose results no later statement of the batch reads (the state in memory answers): they go to
        # the database together at the end, in one round trip on PostgreSQL (plain_sql.run_all).
        self.writes: list[tuple[str, list]] = []
        # Judgments are written with the batch's Events: new ones inserted, changed ones updated, each change
        # kept. Each with the participant's action time on the session's timeline (`at`), not the batch's
        # arrival.
        # (session id, document id) -> (grade, created, at)
        self.judgments_new: dict[tuple[int, int], tuple] = {}
        self.judgments_changed: dict[int, tuple] = {}  # judgment id -> (grade, at)
        # ((session, document), grade, at)
        self.judgment_changes: list[tuple[tuple[int, int], int, datetime]] = []
        self.now = timezone.now()
        self.grade_scale: list[int] | None = None  # read with the locks, or at the first judgment
        self.systems: dict[int, System] = {}
        # HTTP systems' pages, fetched before the transaction (ingest.py), by (system id, text, page); a pass
        # that needs one not fetched yet notes it in http_needs and is rolled back; the last pass may not.
        self.http_pages: dict[tuple[int, str, int], SearchPage] = {}
        self.http_needs: dict[tuple[int, str, int], System] = {}
        self.http_last_pass = False
        self.system_rows: dict[int, tuple] = {}  # system id -> (study id, code, name, backend, config)
        # The study's collection's current index numbers (configuration -> number), read with the locks: a
        # built-in search checks this node's copy against them without a statement of its own.
        self.index_versions: dict[str, int] | None = None

    def at(self, raw: Mapping, state: SessionState) -> datetime:
        """When the event happened, on its session's timeline: its client time + the session's offset, or the
        server's receive time when it sent none or one refused (clock.py)."""
        moment, _, _ = client_time_checked(
            raw.get("time"),
            received_at=self.now,
            window=timedelta(seconds=settings.CLIENT_TIME_WINDOW_SECONDS),
        )
        return self.now if moment is None else moment + offset_delta(state.offset_ms)

    def log(self, raw, state: SessionState | None, data: dict, ack: dict, kind: str | None = None) -> dict:
        sequence = raw.get("seq")  # event_check keeps it within the column
        digest = sent_digest(raw)
        self.bytes_added += event_size(raw)
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
                sequence if is_int(sequence) and sequence >= 0 else None,
                client_time,
                self.now,
                {"data": data, "ack": ack, "sent": digest},
                EventOrigin.CLIENT,  # only what a client sent (event_checks refuses the rest)
            )
        )
        self.stored[raw["id"]] = (kind or raw["type"], state.id if state else None, ack, digest)
        return ack

    def replay(self, raw: Mapping) -> dict | None:
        """The answer to an event that is not applied, or None to apply it: an event whose id is stored
        (earlier, or in this batch) re-sent as it was gets its stored acknowledgement; another event under
        that id is refused, not stored (the id is taken); so is a new event past the participant's quota. A
        row stored before the digest was kept answers as a re-send."""
        stored = self.stored.get(raw["id"])
        if stored is not None and (stored[3] is None or stored[3] == sent_digest(raw)):
            return stored[2]
        if stored is not None:
            message = ID_TAKEN.format(id=raw["id"])
        else:
            size = event_size(raw)
            used = self.participant.event_bytes + self.bytes_added
            quota = settings.EVENTS_BYTES_PER_PARTICIPANT
            if used + size <= quota:
                return None
            message = LOG_FULL.format(used=used, size=size, quota=quota)
        if not self.store_refusals:
            raise Refused(message)
        return {"ok": False, "error": message}

    def bytes_write(self) -> list[tuple[str, list]]:
        """The participant's counter moved by what the batch stored (one UPDATE, with the batch's writes)."""
        return [statements.event_bytes_add(self.participant.pk, self.bytes_added)] if self.bytes_added else []

    # --- checks ---------------------------------------------------------------------------------------

    def state(self, raw: Mapping) -> SessionState:
        session_id = session_id_of(raw)
        state = self.sessions.get(session_id) if session_id is not None else None
        if state is None:
            raise Refused(NOT_YOURS)  # the same answer whether it does not exist or is someone else's
        return state

    def open_state(self, raw: Mapping) -> SessionState:
        state = self.state(raw)
        participant_check_consented(self.participant)
        if state.ended_at is not None:
            raise Refused(FINISHED)
        return state

    def query_position(self, state: SessionState, data: Mapping):
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
    def query_of(state: SessionState, position) -> QueryState:
        query = state.queries.get(position) if is_int(position) else None
        if query is None:
            raise Refused(NOT_THIS_QUERY)
        return query

    @staticmethod
    def shown_document(state: SessionState, doc) -> int:
        document_id = state.shown.get(str(doc))
        if document_id is None:
            raise Refused(NOT_SHOWN)
        return document_id

    def open_query(self, raw, data) -> tuple[SessionState, QueryState]:
        """The open session and the query a page or a scan mark is about (named before the session is checked
        open, so a wrong query is refused as such even in a finished session)."""
        state = self.state(raw)
        position = self.query_position(state, data)
        self.open_state(raw)
        return state, self.query_of(state, position)

    def external(self, state: SessionState) -> bool:
        """Whether the session's system is a researcher's own front-end: its events carry what it showed, and
        SessionLab's engine is never run for it."""
        return self.system_rows[state.system_id][3] == System.Backend.EXTERNAL
