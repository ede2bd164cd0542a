"""One function per type of the search page's events (ingest.py applies them in order, a batch at a time), and
the table that names them: a new event type is one function here and one line in HANDLERS. Any other type is
logged as it came (`event_other`).

A handler checks its event against the batch's state in memory (ingest_batch.py), changes that state, collects
its writes, and returns the event's acknowledgement (before expansion) through `Batch.log`; it raises Refused
(stored with the event) or RetryLater (not stored: sent again). Every row it builds takes the event's time on
its session's timeline (`Batch.at`, docs/time-model.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime

from sessionlab import plain_sql
from studies.errors import Refused
from studies.kernel.deadlines import deadline_at
from studies.models import SearchSession, ShownResult
from studies.participation.events import answer_events, statements
from studies.participation.events.attention_handlers import on_attention, on_exposure
from studies.participation.events.exposure import ExposureError, formulation_checked
from studies.participation.events.ingest_batch import Batch, QueryState, SessionState, is_int, shown_add
from studies.participation.events.ingest_reads import grade_scale, query_marks, query_total
from studies.participation.events.rules import (
    END_REASONS,
    MAX_PAGE,
    participant_check_active,
    participant_check_consented,
    sessions_changed,
)
from studies.participation.events.search_costs import batch_search
from studies.search.engines.search import Hit, SearchPage, highlights_checked

logger = logging.getLogger(__name__)

MAX_RESULTS = 1000  # results an external system's event may log (data.results)
MAX_RESULT_TEXT = 10_000  # characters of a logged title or snippet
RESULT_KEYS = {"doc", "title", "snippet", "highlights"}

Handler = Callable[[Batch, Mapping, dict], dict]


# --- the events -----------------------------------------------------------------------------------------


def on_query(batch: Batch, raw: Mapping, data: dict) -> dict:
    state = batch.open_state(raw)
    text = " ".join(str(data.get("text", "")).split())[:1000]
    if not text:
        raise Refused("Please type some words to search for.")
    at = batch.at(raw, state)
    # How long it took to write: a bad report is left out and said, never the query refused.
    try:
        formulation = formulation_checked(data.get("formulation"))
        formulation_note = None
    except ExposureError as error:
        formulation, formulation_note = (None, None), str(error)
    if batch.external(state):
        # What the researcher's front-end showed, checked before anything is written; no search is run.
        result = external_page(data, 1, 1, text)
        documents = external_documents(batch, result)
        [(query_id, position)] = plain_sql.rows(*statements.query_insert(state.id, text, at, "", formulation))
        logged = {"text": text, "results": data["results"]}
    elif answer_events.is_generative(batch, state):  # the answer's cited documents are its results
        turn = answer_events.turn_of(state, data)
        result = answer_events.turn_page(turn)
        [(query_id, position)], documents = plain_sql.rows_together(
            [
                statements.query_insert(state.id, text, at, "", formulation),
                page_documents_statement(batch, result),
            ]
        )
        answer_events.turn_link(turn, query_id)
        logged = {"text": text, "turn": data["turn"]}
    else:
        result = batch_search(batch, state, text, 1)
        # The next position and the insert in one statement (the session's lock keeps positions in order),
        # in one round trip with the read of the results' documents.
        [(query_id, position)], documents = plain_sql.rows_together(
            [
                statements.query_insert(state.id, text, at, result.error or "", formulation),
                page_documents_statement(batch, result),
            ]
        )
        logged = {"text": text}
    if formulation[1] is not None:
        logged["formulation"] = {"first_key_ms": formulation[0], "submit_ms": formulation[1]}
    elif formulation_note:
        logged["formulation_ignored"] = formulation_note
    message = result.error or ""
    query = state.queries[position] = QueryState(query_id, position, text, None, total=result.total)
    shown_store(batch, state, query, result, 1, documents, at)
    ack = {
        "ok": True,
        "query": position,
        "query_id": query.id,
        "page": 1,
        "total": result.total,
        "message": message,
        "query_used": result.query_used,
        **page_marks(state, query, 1),
    }
    return batch.log(raw, state, logged, ack)


def on_results_page(batch: Batch, raw: Mapping, data: dict) -> dict:
    state, query = batch.open_query(raw, data)
    page = data.get("page")
    if not is_int(page) or not 1 <= page <= MAX_PAGE:
        raise Refused(f"Pages are numbered 1 to {MAX_PAGE}.")
    logged = {"query": query.position, "page": page}
    marks = {}
    if (query.id, page) in state.pages:  # shown before: served from what was stored
        total, message = query_total(batch, query), ""
        marks = page_marks(state, query, page) or query_marks(batch, query, page)
    else:
        if batch.external(state):  # the front-end's next page: its ranks follow the query's last one
            result = external_page(data, page, max(query.ranks, default=0) + 1, query.text)
            documents = external_documents(batch, result)
            logged["results"] = data["results"]
        else:
            result = batch_search(batch, state, query.text, page)
            documents = plain_sql.rows(*page_documents_statement(batch, result))
        shown_store(batch, state, query, result, page, documents, batch.at(raw, state))
        total = result.total if result.total is not None else query_total(batch, query)
        message = result.error or ""
        marks = page_marks(state, query, page)
    ack = {
        "ok": True,
        "query": query.position,
        "query_id": query.id,
        "page": page,
        "total": total,
        "message": message,
        **marks,
    }
    return batch.log(raw, state, logged, ack)


def on_document_open(batch: Batch, raw: Mapping, data: dict) -> dict:
    return _document(batch, raw, data, "open")


def on_document_close(batch: Batch, raw: Mapping, data: dict) -> dict:
    return _document(batch, raw, data, "close")


def _document(batch: Batch, raw: Mapping, data: dict, action: str) -> dict:
    """Only documents shown in this session can be opened; a close is logged even after the session ended,
    so the dwell time of a document open at the stop is kept."""
    state = batch.state(raw)
    position = batch.query_position(state, data)
    if action == "open":
        batch.open_state(raw)
    else:
        participant_check_consented(batch.participant)
    doc = str(data.get("doc", ""))
    document_id = batch.shown_document(state, doc)
    logged = {"doc": doc, "query": position, "rank": data.get("rank")}
    if action == "close":
        dwell_ms = data.get("dwell_ms")
        if dwell_ms is not None and (
            not isinstance(dwell_ms, int | float) or isinstance(dwell_ms, bool) or dwell_ms < 0
        ):
            raise Refused("The dwell time must be a non-negative number of milliseconds.")
        logged["dwell_ms"] = None if dwell_ms is None else int(dwell_ms)
        _reading(batch, state, data, position, logged)
    ack = {"ok": True, "doc": doc}
    if action == "open":
        ack["open_document_id"] = document_id
    return batch.log(raw, state, logged, ack)


def _reading(batch: Batch, state: SessionState, data: Mapping, position, logged: dict) -> None:
    """A close's `read_permille` (how far the document was read, x 1000) added to its shown
    result's exposure; a bad one is left out and said, never the close refused."""
    read, rank = data.get("read_permille"), data.get("rank")
    if read is None:
        return
    if not batch.study.record_exposure:
        logged["read_permille_ignored"] = "the study does not record exposure"
    elif not (is_int(read) and 0 <= read <= 1000 and is_int(position) and is_int(rank) and rank >= 1):
        logged["read_permille_ignored"] = "read_permille must be a whole number from 0 to 1000, with the rank"
    else:
        logged["read_permille"] = read
        batch.writes.append(statements.reading_add(state.id, position, rank, read))


def on_judgment(batch: Batch, raw: Mapping, data: dict) -> dict:
    """The Judgment holds the current grade; every change is kept in JudgmentChange (written by the shell,
    ingest.judgments_write)."""
    state = batch.open_state(raw)
    grade = data.get("grade")
    scale = grade_scale(batch)
    if not is_int(grade) or grade not in scale:
        raise Refused(f"A grade is one of {', '.join(str(g) for g in scale)}.")
    if data.get("query_event"):  # the query that showed it: stored yet, or the judgment waits for it
        batch.query_position(state, data)
    doc = str(data.get("doc", ""))
    document_id = batch.shown_document(state, doc)
    judgment_id, previous = state.judgments.get(document_id, (None, None))
    if previous != grade:
        at = batch.at(raw, state)  # the participant's action, not the batch's arrival
        if judgment_id is None:
            created_at = batch.judgments_new.get((state.id, document_id), (None, at))[1]
            batch.judgments_new[(state.id, document_id)] = (grade, created_at, at)
        else:
            batch.judgments_changed[judgment_id] = (grade, at)
        state.judgments[document_id] = (judgment_id, grade)
        batch.judgment_changes.append(((state.id, document_id), grade, at))
    ack = {"ok": True, "doc": doc, "grade": grade, "previous": previous}
    return batch.log(raw, state, {"doc": doc, "grade": grade}, ack)


def on_scan_mark(batch: Batch, raw: Mapping, data: dict) -> dict:
    """ "I stopped scanning here": the query keeps the deepest rank marked."""
    state, query = batch.open_query(raw, data)
    rank = data.get("rank")
    if not is_int(rank) or rank not in query.ranks:
        raise Refused("Mark a result that was shown for this query.")
    if query.scan_mark_rank is None or query.scan_mark_rank < rank:
        batch.writes.append(statements.scan_mark_update(query.id, rank))
        query.scan_mark_rank = rank
    ack = {"ok": True, "query": query.position, "rank": rank}
    return batch.log(raw, state, {"query": query.position, "rank": rank}, ack)


def on_session_end(batch: Batch, raw: Mapping, data: dict) -> dict:
    """ "satisfied" (I found what I need), "gave_up", or "timed_out" (the time limit ran out)."""
    state = batch.state(raw)
    reason = str(data.get("reason", ""))
    if reason not in END_REASONS:
        raise Refused("A search ends as satisfied, gave_up or timed_out.")
    if reason == SearchSession.EndReason.TIMED_OUT and not batch.study.time_limit_minutes:
        raise Refused("This study has no time limit.")
    batch.open_state(raw)
    deadline = deadline_at(state.started_at, batch.study.time_limit_minutes)
    at = batch.at(raw, state)
    ended_at = min(at, deadline) if reason == SearchSession.EndReason.TIMED_OUT and deadline else at
    ended_at = max(ended_at, state.started_at)  # a client clock that stepped back: never before the start
    SearchSession.objects.filter(pk=state.id, ended_at__isnull=True).update(
        ended_at=ended_at, end_reason=reason
    )
    state.ended_at = ended_at
    sessions_changed(batch.participant.study_id, [state.id], [state.scenario_id])
    return batch.log(raw, state, {"reason": reason}, {"ok": True, "reason": reason})


def event_other(batch: Batch, raw: Mapping, data: dict) -> dict:
    """Anything else the page reports (tab hidden, time warnings...): logged as it came, building no rows."""
    participant_check_active(batch.participant)
    state = batch.state(raw) if raw.get("session") is not None else None
    return batch.log(raw, state, data, {"ok": True})


HANDLERS: dict[str, Handler] = {
    "query": on_query,
    "results_page": on_results_page,
    "document_open": on_document_open,
    "document_close": on_document_close,
    "judgment": on_judgment,
    "scan_mark": on_scan_mark,
    "session_end": on_session_end,
    # What was on screen and when the participant was away: attention_handlers.py.
    "exposure": on_exposure,
    "attention": on_attention,
}


# --- the results a query or a page shows ---------------------------------------------------------------


def page_marks(state: SessionState, query: QueryState, page: int) -> dict:
    """A page's highlights by rank, for the event's stored answer ({"highlights": {"3": [[s, e], ...]}}, none
    when no result has any): a replay or a revisit of the page answers with them, as the first answer did
    (ShownResult keeps no highlights)."""
    marks = {
        str(r["rank"]): r["highlights"] for r in state.pages.get((query.id, page), ()) if "highlights" in r
    }
    return {"highlights": marks} if marks else {}


def page_documents_statement(batch: Batch, result: SearchPage) -> tuple[str, list]:
    """The documents of a page of results (their keys and text); a statement that matches none if empty."""
    return statements.collection_documents(batch.study.collection_id, {h.doc_id for h in result.results})


def shown_store(
    batch: Batch,
    state: SessionState,
    query: QueryState,
    result: SearchPage,
    page: int,
    document_rows,
    shown_at: datetime,
) -> None:
    """Store the results of a page as shown (and keep them in the state for later events and the answer);
    `document_rows`: what page_documents_statement(result) read. A result without a title (an external
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
        shown_add(
            state, query, hit.rank, page, document_id, hit.doc_id, title, hit.snippet, text, hit.highlights
        )
    batch.writes += plain_sql.insert_statements(
        ShownResult, ("query", "rank", "document", "title", "snippet", "page", "shown_at"), rows
    )
    state.pages.setdefault((query.id, page), [])


# --- an external front-end's results ------------------------------------------------------------------


def external_page(data: Mapping, page: int, first_rank: int, text: str) -> SearchPage:
    """The results an external front-end logged, checked against the study's collection item by item."""
    results = external_results(data, first_rank)
    total = data.get("total")
    # A title not given is None: shown_store gives the document's own.
    return SearchPage(
        [
            Hit(doc, rank, None, title, snippet or "", highlights)
            for doc, rank, title, snippet, highlights in results
        ],
        total if is_int(total) and 0 <= total <= 2**31 - 1 else None,
        page,
        query_used=None,
    )


def external_documents(batch: Batch, result: SearchPage) -> list[tuple]:
    """page_documents_statement's rows for an external page, read before anything is written: a document the
    collection does not hold refuses the event, naming its position."""
    rows = plain_sql.rows(
        *statements.collection_documents(batch.study.collection_id, {h.doc_id for h in result.results})
    )
    known = {row[0] for row in rows}
    for n, hit in enumerate(result.results):
        if hit.doc_id not in known:
            raise Refused(f"data.results.{n}: {hit.doc_id!r} is not a document of the study's collection")
    return rows


def external_results(data: Mapping, first_rank: int) -> list[tuple]:
    """The ranked list an external front-end showed (`data.results`: doc ids, or {doc, title?, snippet?,
    highlights?}), as (doc, rank, title, snippet, highlights); raises Refused naming the field and position of
    the first item it cannot be. Highlights are checked pair by pair, a bad pair dropped
    (highlights_checked)."""
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
        highlights: tuple[tuple[int, int], ...] = ()
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
