"""The load benchmark's floor (bench/load_paired.py): a bare WSGI app that takes the search page's event
batches and writes the same rows as SessionLab's endpoint, with the same SQL statements (built by
studies/participation/events/statements.py and sessionlab/plain_sql.py), in the same transaction and round
trips, on the same database connection settings; and nothing else: no middleware, no URL resolving, no view,
no model instances, no per-event checks, no caps, no refusals. Its CPU per event is what a request cannot go
below without writing less or talking to the database differently.

Served by gunicorn as `load_floor:application` (with bench/ on the path), with the server's environment
(DATABASE_URL, INDEX_ROOT): it builds its statements through Django's connection, so it loads Django's
settings and models at start, and searches with the built-in engine (the search is part of the floor: its
results are the rows written).

It handles the benchmark's own traffic only (bench/load_participant.py): GET of a participant page (a bare
200 with a CSRF cookie, so the client is the same), and POST /p/<token>/events/ with {"events": [...]}.
An event already stored (a re-sent batch) is answered what it was answered, as SessionLab does.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sessionlab.settings")

import django  # noqa: E402

django.setup()

from django.db import connection, transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from sessionlab import plain_sql  # noqa: E402
from studies.models import Event, EventOrigin, Judgment, Participant, ShownResult, Study  # noqa: E402
from studies.participation.events import statements  # noqa: E402
from studies.participation.events.ingest_batch import EVENT_COLUMNS, sent_digest  # noqa: E402
from studies.search.index_versions import collection_index_dir  # noqa: E402
from studies.search.systems import PAGE_SIZE, _searcher, system_configuration  # noqa: E402

PARTICIPANT_FIELDS = [f.attname for f in Participant._meta.concrete_fields]
STUDY_FIELDS = [f.attname for f in Study._meta.concrete_fields]
SHOWN_COLUMNS = ("query", "rank", "document", "title", "snippet", "page", "shown_at")
PARTICIPANT_SQL = None  # built at the first request (the dialect is the connection's)


def _participant(token: str) -> dict | None:
    """The participant and their study, by the same statement as kernel.tokens.participant_by_token."""
    global PARTICIPANT_SQL
    if PARTICIPANT_SQL is None:
        PARTICIPANT_SQL = (
            f"SELECT {plain_sql.select_list(Participant, 'p')}, {plain_sql.select_list(Study, 's')}"
            f" FROM {plain_sql.table(Participant)} p JOIN {plain_sql.table(Study)} s ON s.id = p.study_id"
            " WHERE p.access_token_digest = %s"
        )
    found = plain_sql.rows(PARTICIPANT_SQL, [hashlib.sha256(token.encode()).hexdigest()])
    if not found:
        return None
    row = found[0]
    participant = dict(zip(PARTICIPANT_FIELDS, row[: len(PARTICIPANT_FIELDS)], strict=True))
    participant["study"] = dict(zip(STUDY_FIELDS, row[len(PARTICIPANT_FIELDS) :], strict=True))
    return participant


def _compact(data) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


class _Session:
    def __init__(self, row):
        self.id, _, self.ended_at, _, _, self.system_id, _, _, _, _, _, config, self.grades, _ = row
        self.config = json.loads(config) if isinstance(config, str) else config
        self.queries: dict[int, list] = {}  # position -> [query id, text, scan mark, ranks, pages]
        self.shown: dict[str, int] = {}  # external id -> document pk
        self.texts: dict[int, dict] = {}
        self.judgments: dict[int, tuple[int | None, int]] = {}


def _read(participant: dict, events: list[dict]):
    """The batch's reads in one round trip, as ingest_reads.batch_read: the sessions' lock, the stored events,
    each session's documents and queries the batch names."""
    pid = participant["id"]
    names = {e["id"] for e in events}
    needs: dict[int, tuple[set, set]] = {}
    for e in events:
        data = e.get("data") or {}
        ref = data.get("query_event")
        if ref:
            names.add(ref)
        docs, refs = needs.setdefault(int(e["session"]), (set(), set()))
        if "doc" in data:
            docs.add(str(data["doc"]))
        if e["type"] in ("results_page", "scan_mark") and ref:
            refs.add(ref)
    collection_id = participant["study"]["collection_id"]
    batch = [statements.sessions_locked(needs, pid, collection_id), statements.events_stored(pid, names)]
    loads = []
    for session_id, (docs, refs) in needs.items():
        if docs:
            batch.append(
                statements.session_documents(session_id, participant["study"]["collection_id"], docs)
            )
            loads.append(("documents", session_id))
        if refs:
            batch.append(statements.session_queries(session_id, pid, (), refs))
            loads.append(("queries", session_id))
    locked, stored_rows, *named = plain_sql.rows_together(batch)
    sessions = {row[0]: _Session(row) for row in locked}
    stored = {}
    for client_id, type_, session_id, payload in stored_rows:
        payload = json.loads(payload) if isinstance(payload, str | bytes) else payload
        stored[client_id] = (type_, session_id, payload.get("ack") or {"ok": True})
    for (kind, session_id), rows in zip(loads, named, strict=True):
        if kind == "documents":
            _documents_noted(sessions[session_id], rows)
        else:
            _queries_noted(sessions[session_id], rows)
    return sessions, stored


def _documents_noted(state: _Session, rows) -> None:
    """A session's documents the batch names: what was shown, their texts, their judgments."""
    for external_id, document_id, title, text, judgment_id, grade in rows:
        state.shown[external_id] = document_id
        state.texts[document_id] = {"doc": external_id, "title": title, "text": text}
        if judgment_id is not None:
            state.judgments[document_id] = (judgment_id, grade)


def _queries_noted(state: _Session, rows) -> None:
    """A session's queries the batch names, with the ranks and pages shown for each."""
    for query_id, position, text, mark, rank, page, document_id, external_id, *_ in rows:
        query = state.queries.setdefault(position, [query_id, text, mark, set(), set()])
        if rank is not None:
            query[3].add(rank)
            query[4].add(page)
            state.shown.setdefault(external_id, document_id)


def _search(participant: dict, state: _Session, text: str, page: int):
    configuration = system_configuration(state.config)
    index_dir = collection_index_dir(
        collection_id=participant["study"]["collection_id"], configuration=configuration
    )
    return _searcher(index_dir, configuration).search(text, page, PAGE_SIZE)


def _shown(writes, state, query, result, page, documents, at) -> list[dict]:
    by_id = {external_id: (pk, text, title) for external_id, pk, text, title in documents}
    rows, shown = [], []
    for hit in result.results:
        document_id, text, title = by_id[hit.doc_id]
        rows.append((query[0], hit.rank, document_id, hit.title, hit.snippet, page, at))
        query[3].add(hit.rank)
        state.shown.setdefault(hit.doc_id, document_id)
        state.texts[document_id] = {"doc": hit.doc_id, "title": hit.title, "text": text}
        shown.append(
            {"rank": hit.rank, "doc": hit.doc_id, "title": hit.title, "snippet": hit.snippet, "text": text}
        )
    writes += plain_sql.insert_statements(ShownResult, SHOWN_COLUMNS, rows)
    return shown


_NO_CAP_MS = 10**12


@dataclass
class _Writes:
    """What one batch writes, gathered to be sent in one round trip at its end."""

    statements: list = field(default_factory=list)
    judgments_new: dict = field(default_factory=dict)
    judgments_changed: dict = field(default_factory=dict)
    changes: list = field(default_factory=list)


def batch_floor(participant: dict, events: list[dict]) -> list[dict]:
    now = timezone.now()
    pid = participant["id"]
    with transaction.atomic():
        sessions, stored = _read(participant, events)
        out = _Writes()
        rows: list = []
        size = 0
        acks = []
        for raw in events:
            if raw["id"] in stored:
                acks.append({"id": raw["id"], **stored[raw["id"]][2]})
                continue
            state = sessions[int(raw["session"])]
            at = datetime.fromtimestamp(raw["time"] / 1000, UTC)
            kind = raw["type"]
            ack, logged, extra = _event_floor(out, participant, state, stored, raw, at)
            size += len(_compact(raw.get("data")))
            rows.append(
                (
                    pid,
                    state.id,
                    kind,
                    raw["id"],
                    raw.get("seq"),
                    at,
                    now,
                    {"data": logged, "ack": ack, "sent": sent_digest(raw)},
                    EventOrigin.CLIENT,
                )
            )
            stored[raw["id"]] = (kind, state.id, ack)
            acks.append({"id": raw["id"], **ack, **extra})
        writes = out.statements
        writes += plain_sql.insert_statements(
            Judgment,
            ("session", "document", "grade", "created_at", "updated_at"),
            [(*key, grade, created, updated) for key, (grade, created, updated) in out.judgments_new.items()],
        )
        for judgment_id, (grade, updated) in out.judgments_changed.items():
            writes.append(statements.judgment_update(judgment_id, grade, updated))
        writes += statements.judgment_changes_insert(out.changes)
        writes += plain_sql.insert_statements(Event, EVENT_COLUMNS, rows)
        if size:
            writes.append(statements.event_bytes_add(pid, size))
        plain_sql.run_all(writes)
    return acks


def _event_floor(out: _Writes, participant: dict, state, stored: dict, raw: dict, at) -> tuple:
    """(ack, what is logged, what the ack carries besides) of one new event, its writes added to `out`."""
    data = raw.get("data") or {}
    kind = raw["type"]
    if kind in ("query", "results_page"):
        return _search_floor(out, participant, state, stored, kind, data, at)
    if kind in ("document_open", "document_close"):
        doc = str(data["doc"])
        position = stored[data["query_event"]][2]["query"]
        logged = {"doc": doc, "query": position, "rank": data.get("rank")}
        if kind == "document_close":
            logged["dwell_ms"] = data.get("dwell_ms")
            return {"ok": True, "doc": doc}, logged, {}
        return {"ok": True, "doc": doc}, logged, {"document": state.texts[state.shown[doc]]}
    if kind == "judgment":
        return (*_judgment_floor(out, state, data, at), {})
    if kind == "scan_mark":
        position = stored[data["query_event"]][2]["query"]
        query, rank = state.queries[position], data["rank"]
        if query[2] is None or query[2] < rank:
            out.statements.append(statements.scan_mark_update(query[0], rank))
            query[2] = rank
        return {"ok": True, "query": position, "rank": rank}, {"query": position, "rank": rank}, {}
    if kind in ("exposure", "attention"):
        return _report_floor(out, state, stored, kind, data), data, {}
    return {"ok": True}, data, {}


def _search_floor(out: _Writes, participant: dict, state, stored: dict, kind: str, data: dict, at) -> tuple:
    collection_id = participant["study"]["collection_id"]
    if kind == "query":
        text = data["text"]
        result = _search(participant, state, text, 1)
        [(query_id, position)], documents = plain_sql.rows_together(
            [
                statements.query_insert(state.id, text, at, result.error or ""),
                statements.collection_documents(collection_id, {h.doc_id for h in result.results}),
            ]
        )
        query = state.queries[position] = [query_id, text, None, set(), {1}]
        extra = {"results": _shown(out.statements, state, query, result, 1, documents, at)}
        ack = {"ok": True, "query": position, "query_id": query_id, "page": 1, "total": result.total}
        ack.update(message="", query_used=result.query_used)
        return ack, {"text": text}, extra
    position = stored[data["query_event"]][2]["query"]
    query = state.queries[position]
    page = data["page"]
    result = _search(participant, state, query[1], page)
    documents = plain_sql.rows(
        *statements.collection_documents(collection_id, {h.doc_id for h in result.results})
    )
    extra = {"results": _shown(out.statements, state, query, result, page, documents, at)}
    ack = {"ok": True, "query": position, "query_id": query[0], "page": page, "total": result.total}
    ack["message"] = ""
    return ack, {"query": position, "page": page}, extra


def _judgment_floor(out: _Writes, state, data: dict, at) -> tuple:
    doc, grade = str(data["doc"]), data["grade"]
    document_id = state.shown[doc]
    judgment_id, previous = state.judgments.get(document_id, (None, None))
    if previous != grade:
        if judgment_id is None:
            created = out.judgments_new.get((state.id, document_id), (None, at))[1]
            out.judgments_new[(state.id, document_id)] = (grade, created, at)
        else:
            out.judgments_changed[judgment_id] = (grade, at)
        state.judgments[document_id] = (judgment_id, grade)
        out.changes.append(((state.id, document_id), grade, at))
    return {"ok": True, "doc": doc, "grade": grade, "previous": previous}, {"doc": doc, "grade": grade}


def _report_floor(out: _Writes, state, stored: dict, kind: str, data: dict) -> dict:
    if kind == "exposure":
        position, page = stored[data["query_event"]][2]["query"], data.get("page", 1)
        items = [(*item, *([0] * (7 - len(item)))) for item in data["items"]]
        # The same statement as the server's; the floor checks nothing, so its cap never binds.
        out.statements += statements.exposures_add(state.id, position, page, items, cap_ms=_NO_CAP_MS)
        if data.get("scroll_permille") is not None:
            out.statements.append(
                statements.page_scroll_add(state.id, position, page, data["scroll_permille"])
            )
        return {"ok": True, "query": position, "page": page, "ranks": len(items)}
    from studies.models import AttentionSpan

    spans = data["spans"]
    out.statements += plain_sql.insert_statements(
        AttentionSpan,
        ("session", "kind", "start_ms", "duration_ms"),
        [(state.id, k, start, duration) for k, start, duration in spans],
    )
    return {"ok": True, "spans": len(spans)}


def _answer(start_response, status: str, body: bytes, headers=()) -> list[bytes]:
    start_response(
        status, [("Content-Type", "application/json"), ("Content-Length", str(len(body))), *headers]
    )
    return [body]


def application(environ, start_response):
    parts = environ.get("PATH_INFO", "").strip("/").split("/")
    if environ["REQUEST_METHOD"] == "GET":  # the participant's page: only its CSRF cookie
        return _answer(start_response, "200 OK", b"{}", [("Set-Cookie", "csrftoken=floor; Path=/")])
    participant = _participant(parts[1]) if len(parts) == 3 and parts[2] == "events" else None
    if participant is None:
        return _answer(start_response, "404 Not Found", b'{"error": "no such study link"}')
    length = int(environ.get("CONTENT_LENGTH") or 0)
    events = json.loads(environ["wsgi.input"].read(length))["events"]
    try:
        acks = batch_floor(participant, events)
    except Exception:
        connection.close()  # a broken transaction: the next request opens a new connection
        raise
    return _answer(start_response, "200 OK", json.dumps({"acks": acks}).encode())
