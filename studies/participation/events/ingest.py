"""The search page's events, a batch at a time: the one implementation of queries, result pages, document
views, judgments, scan marks and session ends (the services in steps.py are batches of one).

A batch is read and written in one transaction, and every statement serves the whole batch: the participant's
sessions named in the batch are read and locked (SELECT ... FOR UPDATE, so a beacon and a fetch carrying the
same events are served one after the other), the stored events among the batch's ids are read once, each
session's queries and shown results once, and the writes (shown results, judgments, Events) go together at the
end. On PostgreSQL a batch with a query costs three round trips and the COMMIT: the reads (with the BEGIN),
the query's insert with its results' documents, the writes. Events are checked and applied in order against
that state in memory, so an event may refer to one earlier in the same batch (a document opened from the query
just logged). A re-sent event answers its stored acknowledgement and builds nothing. A refused event is stored
with its refusal (unless the participant declined or withdrew), so a re-send is refused the same way.
docs/performance-load.md gives the figures this design is for.

Times (docs/time-model.md): every row an event builds takes the event's time on its session's timeline (client
time + the session's clock offset, `Batch.at`). A batch whose clock sample beats a session's estimate moves
that session's derived times first (`clock_apply`: one UPDATE per table, a few times a session). An external
system's query or page reads its documents before the insert (one round trip more), since an unknown one
refuses the event before anything is written.

A researcher's HTTP system is never called inside the transaction: a pass that needs one of its pages notes it
and is rolled back before any write, the pages are fetched with no transaction open, and the batch runs again
with them (a batch with an HTTP search costs one pass more; built-in systems search inside, as above).

Here: the shell (the transaction, its retries, the acknowledgements). The batch's state and shared checks are
in ingest_batch.py, its locked reads in ingest_reads.py, the caps on its searches in search_costs.py, and one
handler per event type, in the table HANDLERS, in event_handlers.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import cast

from django.db import IntegrityError, OperationalError, connection, transaction

from sessionlab import plain_sql
from studies.errors import EventRefused, Refused, RetryLater
from studies.models import Document, Event, Judgment, ShownResult
from studies.participation.events import statements
from studies.participation.events.clock import Sample
from studies.participation.events.event_checks import CLIENT_ID, event_check
from studies.participation.events.event_handlers import HANDLERS, event_other
from studies.participation.events.ingest_batch import EVENT_COLUMNS, Batch, session_id_of
from studies.participation.events.ingest_reads import batch_read
from studies.participation.events.rules import MAX_BATCH
from studies.participation.events.search_costs import http_pages_fetch, searches_count
from studies.search.engines.search import highlights_checked

WAITING = "An earlier search of this session is waiting; send it again later."
LOCKED_RETRIES = 4  # SQLite: attempts of a batch that found the database locked (docs/running-a-study.md)
FETCH_PASSES = 2  # passes that may roll back to fetch HTTP systems' pages first (a batch needs one at most,
# unless another request changed its sessions meanwhile)


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
    "error": message} for an event the log cannot hold (studies/participation/events/event_checks.py: checked
    before any SQL, not stored; the same event always gets the same answer), or {"id", "ok": false,
    "retry_later": message} for an event to send again (its query is not stored yet, a search past the caps,
    past the batch's MAX_BATCH events; nothing stored). A withdrawn participant's events are refused and not
    stored. With store_refusals=False (the services) anything but a success raises Refused and nothing is
    stored. capped (the endpoints): searches are capped per batch and per minute. clock_sample: the batch's
    estimate of the client's clock offset (clock.sample_read), taken by the sessions it names where it is
    better."""
    answers, valid = _events_checked(events)
    if not store_refusals and len(valid) < len(answers):
        message = next(a.get("error") or a.get("retry_later") for a in answers if a is not None)
        raise Refused(cast(str, message))  # each answer there holds an "error" or a "retry_later" text
    if participant.withdrawn_at is not None:
        refusal = "You have withdrawn from this study; nothing more is recorded."
        if valid and not store_refusals:
            raise Refused(refusal)
        checked = iter(valid)
        return [answer or {"id": next(checked)["id"], "ok": False, "refused": refusal} for answer in answers]
    batch, acks = _batch_stored(
        lambda: Batch(participant, store_refusals=store_refusals, capped=capped, clock_sample=clock_sample),
        valid,
    )
    searches_count(batch)
    expanded = iter(acks_expand(batch, acks))
    checked = iter(valid)
    return [answer or {"id": next(checked)["id"], **next(expanded)} for answer in answers]


class _FetchFirst(Exception):
    """A pass met HTTP systems' pages not fetched yet (batch.http_needs): roll it back, fetch them."""


def _batch_stored(new_batch: Callable[[], Batch], valid: list[dict]) -> tuple[Batch, list[dict]]:
    """Apply the batch in one transaction, tried again as the failures below say. An HTTP system is never
    called inside it: a pass that needs a page rolls back, the pages are fetched with no transaction open
    (search_costs.http_pages_fetch), and the batch runs again with them (a page still missing on the last
    pass is "retry later")."""
    pages: dict = {}
    fetches = failures = 0
    while True:
        batch = new_batch()
        batch.http_pages, batch.http_last_pass = pages, fetches >= FETCH_PASSES
        try:
            with transaction.atomic():
                return batch, _batch_apply(batch, valid)
        except _FetchFirst:
            fetches += 1
            http_pages_fetch(batch.http_needs, pages)
        except IntegrityError:
            # Two requests raced the same event ids outside any session lock (events naming no session): the
            # other one stored them first; answering again replays what it stored.
            failures += 1
            if failures >= 2:
                raise
        except OperationalError as error:
            # SQLite: a write transaction takes its lock at BEGIN (transaction_mode IMMEDIATE) and waits up to
            # its busy timeout; should that run out, the batch is tried again a few times, never answered 500.
            failures += 1
            if (
                connection.vendor != "sqlite"
                or "locked" not in str(error)
                or failures >= LOCKED_RETRIES
                or connection.in_atomic_block
            ):
                raise
            time.sleep(0.05 * failures)


def _events_checked(events: Sequence[Mapping]) -> tuple[list[dict | None], list[dict]]:
    """The answers of the events refused before any SQL (None for each of the others, in order) and the
    events checked (event_check), to apply."""
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
    return answers, valid


def _id_of(raw) -> str | None:
    """The id an answer about a refused event carries: the event's own when it is a client event id, else None
    (an answer never echoes a malformed one: half an emoji cannot even be written as UTF-8)."""
    cid = raw.get("id") if isinstance(raw, Mapping) else None
    return cid if isinstance(cid, str) and CLIENT_ID.match(cid) else None


def _batch_apply(batch: Batch, events: Sequence[Mapping]) -> list[dict]:
    if not events:
        return []
    batch_read(batch, events)
    acks = []
    for raw in events:
        replay = batch.replay(raw)  # the same event re-sent, or another under its id (refused)
        if replay is not None:
            acks.append(replay)
            continue
        try:
            acks.append(event_apply(batch, raw))
        except RetryLater as wait:
            if not batch.store_refusals:
                raise
            acks.append({"ok": False, "retry_later": wait.message})  # not stored: the next try decides
        except Refused as refusal:
            if not batch.store_refusals:
                raise
            acks.append(event_refused(batch, raw, refusal))
    if batch.http_needs:
        raise _FetchFirst  # before any write: this pass is rolled back
    judgments_write(batch)
    batch.writes += plain_sql.insert_statements(Event, EVENT_COLUMNS, batch.rows) + batch.bytes_write()
    plain_sql.run_all(batch.writes)
    return acks


def event_apply(batch: Batch, raw: Mapping) -> dict:
    """Check and apply one new event; returns its acknowledgement (before expansion) or raises Refused."""
    data = raw["data"] if isinstance(raw.get("data"), dict) else {}
    if batch.waiting and session_id_of(raw) in batch.waiting:
        raise RetryLater(WAITING)  # in order behind the search that waits
    return HANDLERS.get(raw["type"], event_other)(batch, raw, data)


def event_refused(batch: Batch, raw: Mapping, refusal: Refused) -> dict:
    ack = {"ok": False, "refused": refusal.message}
    if batch.participant.withdrawn_at is not None or batch.participant.declined_at is not None:
        return ack  # nothing is recorded about them
    session_id = session_id_of(raw)
    state = batch.sessions.get(session_id) if session_id is not None else None
    data = raw["data"] if isinstance(raw.get("data"), dict) else {}
    return batch.log(raw, state, data, ack)


def judgments_write(batch: Batch) -> None:
    """The batch's judgments: the new ones in one statement, one update per changed one, and the history,
    each change naming its judgment by (session, document) so that no statement waits on another's ids."""
    batch.writes += plain_sql.insert_statements(
        Judgment,
        ("session", "document", "grade", "created_at", "updated_at"),
        [
            (*key, grade, created_at, updated_at)
            for key, (grade, created_at, updated_at) in batch.judgments_new.items()
        ],
    )
    for judgment_id, (grade, updated_at) in batch.judgments_changed.items():
        batch.writes.append(statements.judgment_update(judgment_id, grade, updated_at))
    batch.writes += statements.judgment_changes_insert(batch.judgment_changes)


# --- answering ------------------------------------------------------------------------------------------


def acks_expand(batch: Batch, acks: list[dict]) -> list[dict]:
    """Acknowledgements with what they point to: the results of a page, the text of a document opened."""
    pages = {}
    for state in batch.sessions.values():
        pages.update(state.pages)
    documents = {}
    for state in batch.sessions.values():
        documents.update(state.texts)
    wanted = {a["open_document_id"] for a in acks if a.get("ok") and a.get("open_document_id")} - set(
        documents
    )
    if wanted:  # replays of opens from earlier batches
        documents.update(
            {
                d["pk"]: {"doc": d["external_id"], "title": d["title"], "text": d["text"]}
                for d in Document.objects.filter(pk__in=wanted).values("pk", "external_id", "title", "text")
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
