"""What a batch of events reads (ingest.py), under its sessions' locks: the sessions it names (locked), the
stored events it names, of each session the documents and queries it names; a clock sample that beats a
session's estimate moves that session's derived times first. Also the reads a few events need later: the grade
scale, and what an earlier batch's acknowledgement kept (a query's total, a page's highlights).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import cast

from django.db.models import F

from sessionlab import plain_sql
from studies.kernel.deadlines import TIME_LIMIT_GRACE, deadline_at
from studies.models import Event, Judgment, JudgmentChange, Query, SearchSession, ShownResult
from studies.participation.events import statements
from studies.participation.events.clock import is_better, offset_delta
from studies.participation.events.ingest_batch import (
    Batch,
    QueryState,
    SessionState,
    is_int,
    session_id_of,
    shown_add,
)
from studies.participation.events.rules import session_expire_if_due
from studies.search.index_versions import versions_parse


def batch_read(batch: Batch, events: Sequence[Mapping]) -> None:
    """Lock the participant's sessions the batch names; read the stored events it names, and of each session
    the documents and queries it names: all in one round trip on PostgreSQL (plain_sql.rows_together), the
    lock first, so that the reads after it see what a batch that held it before has stored."""
    names, needs = _named(events)
    stored = statements.events_stored(batch.participant.pk, names)
    if not needs:
        stored_load(batch, plain_sql.rows(*stored))
        return
    collection_id = batch.study.collection_id
    batch_statements = [statements.sessions_locked(needs, batch.participant.pk, collection_id), stored]
    # Another participant's session is read here too, and dropped below: the lock's read names only theirs.
    named, loads = {}, []
    for session_id, (docs, positions, refs) in needs.items():
        # A placeholder: the lock's row fills started_at and the rest below, before anything reads them.
        state = named[session_id] = SessionState(session_id, None, None, 0, 0)  # type: ignore[arg-type]
        if docs:
            # The documents named, if shown in this session: with their text (an open is answered with it,
            # without another round trip) and this session's judgment of them.
            batch_statements.append(statements.session_documents(state.id, batch.study.collection_id, docs))
            loads.append((documents_load, state))
        if positions or refs:
            # The queries named, by position or by the client id of their query event (stored in an earlier
            # batch, its acknowledgement holds the position), with their shown results.
            batch_statements.append(
                statements.session_queries(state.id, batch.participant.pk, positions, refs)
            )
            loads.append((queries_load, state))
    locked, stored_rows, *named_rows = plain_sql.rows_together(batch_statements)
    stored_load(batch, stored_rows)
    for (load, state), rows in zip(loads, named_rows, strict=True):
        load(state, rows)
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
        versions,
    ) in locked:
        batch.system_rows[system_id] = tuple(system)
        if batch.index_versions is None:
            batch.index_versions = versions_parse(versions)
        if batch.grade_scale is None:
            batch.grade_scale = sorted(int(value) for value in (grades or "").split(",") if value)
        state = batch.sessions[session_id] = named[session_id]
        # started_at is NOT NULL
        state.started_at = cast(datetime, plain_sql.aware(started_at))
        state.ended_at = plain_sql.aware(ended_at)
        state.system_id, state.scenario_id = system_id, scenario_id
        state.offset_ms, state.delay_ms = offset_ms, delay_ms
        clock_apply(batch, state)
        deadline = deadline_at(state.started_at, batch.study.time_limit_minutes)
        if ended_at is None and deadline and batch.now >= deadline + TIME_LIMIT_GRACE:
            # past its time: the service ends it (timed_out), once
            session = SearchSession.objects.select_related("assignment__participant__study").get(
                pk=session_id
            )
            if session_expire_if_due(session=session, now=batch.now):
                state.ended_at = session.ended_at


def _named(events: Sequence[Mapping]) -> tuple[set[str], dict[int, tuple[set[str], set[int], set[str]]]]:
    """The client ids the batch names (its events', and the query events they refer to), and by session the
    documents, query positions and query event ids its events name: session id -> (docs, positions, refs)."""
    names = {e["id"] for e in events}
    needs: dict[int, tuple[set[str], set[int], set[str]]] = {}
    for e in events:
        data = e["data"] if isinstance(e.get("data"), dict) else {}
        ref = data.get("query_event")
        if isinstance(ref, str) and ref:
            names.add(ref)
        session_id = session_id_of(e)
        if session_id is None:
            continue
        docs, positions, refs = needs.setdefault(session_id, (set(), set(), set()))
        if "doc" in data:
            docs.add(str(data["doc"]))
        if e["type"] in ("results_page", "scan_mark"):  # the only events that check a query's results
            if isinstance(ref, str) and ref:
                refs.add(ref)
            elif is_int(data.get("query")):
                positions.add(data["query"])
    return names, needs


def documents_load(state: SessionState, rows) -> None:
    for external_id, document_id, title, text, judgment_id, grade in rows:
        state.shown[external_id] = document_id
        state.texts[document_id] = {"doc": external_id, "title": title, "text": text}
        if judgment_id is not None:
            state.judgments[document_id] = (judgment_id, grade)


def queries_load(state: SessionState, rows) -> None:
    for query_id, position, text, mark, rank, page, document_id, external_id, title, snippet, body in rows:
        query = state.queries.get(position)
        if query is None:
            query = state.queries[position] = QueryState(query_id, position, text, mark)
        if rank is not None:
            shown_add(state, query, rank, page, document_id, external_id, title, snippet, body)


def stored_load(batch: Batch, rows) -> None:
    for client_id, type_, session_id, payload in rows:
        payload = json.loads(payload) if isinstance(payload, str | bytes) else payload
        batch.stored[client_id] = (type_, session_id, payload.get("ack") or {"ok": True}, payload.get("sent"))


def clock_apply(batch: Batch, state: SessionState) -> None:
    """Take this batch's clock sample if it is better than the session's estimate; the session's derived
    times move by the change, before any of the batch's events is applied (clock.py)."""
    sample = batch.clock_sample
    if sample is None or not is_better(sample, state.offset_ms, state.delay_ms):
        return
    delta = offset_delta(sample.offset_ms) - offset_delta(state.offset_ms)
    SearchSession.objects.filter(pk=state.id).update(
        clock_offset_ms=sample.offset_ms, clock_delay_ms=sample.delay_ms
    )
    if delta:
        times_shift(state.id, delta)
        state.started_at += delta
        state.ended_at = state.ended_at + delta if state.ended_at is not None else None
    state.offset_ms, state.delay_ms = sample.offset_ms, sample.delay_ms


def times_shift(session_id: int, delta: timedelta) -> None:
    """Move every time derived from a session's events by `delta` (its clock offset changed): they stay on
    one timeline, client time + the offset (clock.py). Only when a better estimate arrives, a few times a
    session."""
    SearchSession.objects.filter(pk=session_id).update(
        started_at=F("started_at") + delta, ended_at=F("ended_at") + delta
    )
    Query.objects.filter(session_id=session_id).update(issued_at=F("issued_at") + delta)
    ShownResult.objects.filter(query__session_id=session_id).update(shown_at=F("shown_at") + delta)
    Judgment.objects.filter(session_id=session_id).update(
        created_at=F("created_at") + delta, updated_at=F("updated_at") + delta
    )
    JudgmentChange.objects.filter(judgment__session_id=session_id).update(changed_at=F("changed_at") + delta)


def grade_scale(batch: Batch) -> list[int]:
    """The study's grades: read with the sessions' locks, or here when the batch locked none."""
    if batch.grade_scale is None:
        batch.grade_scale = [value for (value,) in plain_sql.rows(*statements.grade_values(batch.study.id))]
    return batch.grade_scale


def query_marks(batch: Batch, query: QueryState, page: int) -> dict:
    """The highlights of a page shown in an earlier batch, as its first acknowledgement kept them."""
    for payload in (
        Event.objects.filter(
            participant=batch.participant,
            payload__ack__query_id=query.id,
            payload__ack__page=page,
            payload__ack__has_key="highlights",
        )
        .order_by("id")
        .values_list("payload", flat=True)[:1]
    ):
        return {"highlights": (payload.get("ack") or {}).get("highlights")}
    return {}


def query_total(batch: Batch, query: QueryState) -> int | None:
    """The total the system reported for this query (kept in the acknowledgement of its query event)."""
    if query.total is None:
        for payload in (
            Event.objects.filter(participant=batch.participant, payload__ack__query_id=query.id)
            .order_by("-id")
            .values_list("payload", flat=True)
        ):
            query.total = (payload.get("ack") or {}).get("total")
            if query.total is not None:
                break
    return query.total
