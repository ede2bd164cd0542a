"""Every SQL statement the event batch (ingest.py) runs, one named function each, returning (sql, params).

The batch is the load path (docs/performance-load.md), so it writes plain SQL through sessionlab/plain_sql.py
(which owns the Django internals this needs) instead of the ORM. The dialect is read from the connection
when a statement is built, never at import time, so a test or a process that switches databases gets the
right SQL.
"""

from __future__ import annotations

from collections.abc import Collection as Sized
from collections.abc import Sequence

from django.db import connection

from sessionlab import plain_sql
from studies.models import (
    Assignment,
    Document,
    Event,
    GradeLevel,
    IndexVersion,
    Judgment,
    JudgmentChange,
    PageExposure,
    Participant,
    Query,
    ResultExposure,
    SearchSession,
    ShownResult,
    System,
)

Statement = tuple[str, list]


def _table(model) -> str:
    return plain_sql.table(model)


def _marks(values: Sized) -> str:
    return plain_sql.marks(len(values))


def _ack_query() -> str:
    """The position a stored query event's acknowledgement holds (payload: {"data": ..., "ack": ...})."""
    if connection.vendor == "postgresql":
        return "CAST(e.payload -> 'ack' ->> 'query' AS integer)"
    return "json_extract(e.payload, '$.ack.query')"


def events_stored(participant_id: int, client_ids: Sized) -> Statement:
    """The participant's stored events among these client ids (a re-sent event answers what it answered)."""
    return (
        f"SELECT client_event_id, type, session_id, payload FROM {_table(Event)}"
        f" WHERE participant_id = %s AND client_event_id IN ({_marks(client_ids)})",
        [participant_id, *client_ids],
    )


def sessions_locked(session_ids: Sized, participant_id: int, collection_id: int | None = None) -> Statement:
    """The participant's sessions among these ids, locked for the batch (FOR UPDATE where the database has
    it), with each session's clock offset (clock.py), system and the study's grade scale, and the current
    numbers of the collection's search indexes ("configuration=number,...", IndexVersion; NULL without a
    collection), so a search asks no more of the database (index_versions.local_state_of)."""
    lock = " FOR UPDATE OF s" if connection.features.has_select_for_update_of else ""
    number = "v.configuration || '=' || v.number"
    versions = (
        f", (SELECT {plain_sql.joined(number)} FROM {_table(IndexVersion)} v WHERE v.collection_id = %s)"
    )
    return (
        "SELECT s.id, s.started_at, s.ended_at, s.clock_offset_ms, s.clock_delay_ms, a.system_id,"
        " a.scenario_id, y.study_id, y.code, y.name,"
        f" y.backend, y.config, (SELECT {plain_sql.joined('g.value')} FROM {_table(GradeLevel)} g"
        f" WHERE g.study_id = y.study_id){versions} FROM {_table(SearchSession)} s"
        f" JOIN {_table(Assignment)} a ON a.id = s.assignment_id"
        f" JOIN {_table(System)} y ON y.id = a.system_id WHERE s.id IN ({_marks(session_ids)})"
        f" AND a.participant_id = %s ORDER BY s.id{lock}",
        [collection_id, *session_ids, participant_id],
    )


def session_documents(session_id: int, collection_id: int, external_ids: Sized) -> Statement:
    """The documents named, if shown in this session: with their text and this session's judgment of them."""
    return (
        f"SELECT d.external_id, d.id, d.title, d.text, j.id, j.grade FROM {_table(Document)} d"
        f" LEFT JOIN {_table(Judgment)} j ON j.session_id = %s AND j.document_id = d.id"
        f" WHERE d.collection_id = %s AND d.external_id IN ({_marks(external_ids)}) AND EXISTS (SELECT 1"
        f" FROM {_table(ShownResult)} r JOIN {_table(Query)} q ON q.id = r.query_id"
        " WHERE r.document_id = d.id AND q.session_id = %s)",
        [session_id, collection_id, *external_ids, session_id],
    )


def session_queries(
    session_id: int, participant_id: int, positions: Sized, query_event_ids: Sized
) -> Statement:
    """The session's queries named by position or by the client id of their query event (stored in an earlier
    batch: its acknowledgement holds the position), with their shown results in order."""
    named = [f"q.position IN ({_marks(positions)})"] if positions else []
    if query_event_ids:
        named.append(
            f"q.position IN (SELECT {_ack_query()} FROM {_table(Event)} e WHERE e.participant_id = %s"
            f" AND e.session_id = %s AND e.type = 'query'"
            f" AND e.client_event_id IN ({_marks(query_event_ids)}))"
        )
    by_event = (participant_id, session_id, *query_event_ids) if query_event_ids else ()
    return (
        "SELECT q.id, q.position, q.text, q.scan_mark_rank, r.rank, r.page, r.document_id, d.external_id,"
        f" r.title, r.snippet, d.text FROM {_table(Query)} q LEFT JOIN {_table(ShownResult)} r"
        f" ON r.query_id = q.id LEFT JOIN {_table(Document)} d ON d.id = r.document_id"
        f" WHERE q.session_id = %s AND ({' OR '.join(named)}) ORDER BY q.position, r.rank",
        [session_id, *positions, *by_event],
    )


def grade_values(study_id: int) -> Statement:
    return f"SELECT value FROM {_table(GradeLevel)} WHERE study_id = %s ORDER BY value", [study_id]


def collection_documents(collection_id: int, external_ids: Sized) -> Statement:
    """Documents of the collection by external id (their keys, text and title); none when given none."""
    names = external_ids or {""}
    return (
        f"SELECT external_id, id, text, title FROM {_table(Document)} WHERE collection_id = %s"
        f" AND external_id IN ({_marks(names)})",
        [collection_id, *names],
    )


def query_insert(
    session_id: int, text: str, issued_at, system_message: str, formulation: tuple = (None, None)
) -> Statement:
    """A new query at the session's next position, in one statement (the session's lock keeps positions in
    order), with how long it took to write (first key, submission; exposure.formulation_checked); returns
    (id, position)."""
    table = _table(Query)
    return (
        f"INSERT INTO {table} (session_id, position, text, issued_at, system_message, first_key_ms,"
        " formulation_ms)"
        f" SELECT %s, COALESCE(MAX(position), 0) + 1, %s, %s, %s, %s, %s FROM {table} WHERE session_id = %s"
        " RETURNING id, position",
        [
            session_id,
            text,
            plain_sql.prepared(Query, "issued_at", issued_at),
            system_message,
            *formulation,
            session_id,
        ],
    )


def event_bytes_add(participant_id: int, size: int) -> Statement:
    """The participant's stored event data grows by `size` bytes (the quota's counter, one statement)."""
    return (
        f"UPDATE {_table(Participant)} SET event_bytes = event_bytes + %s WHERE id = %s",
        [size, participant_id],
    )


def scan_mark_update(query_id: int, rank: int) -> Statement:
    return f"UPDATE {_table(Query)} SET scan_mark_rank = %s WHERE id = %s", [rank, query_id]


def judgment_update(judgment_id: int, grade: int, updated_at) -> Statement:
    return (
        f"UPDATE {_table(Judgment)} SET grade = %s, updated_at = %s WHERE id = %s",
        [grade, plain_sql.prepared(Judgment, "updated_at", updated_at), judgment_id],
    )


def judgment_changes_insert(changes: Sequence[tuple[tuple[int, int], int, object]]) -> list[Statement]:
    """The history of changed grades ((session, document), grade, changed at), each naming its judgment by
    (session, document) so that no statement waits on another's ids; as many statements as the database's
    parameter limit needs."""
    per_statement = plain_sql.MAX_PARAMS // 4
    statements = []
    for start in range(0, len(changes), per_statement):
        chunk = changes[start : start + per_statement]
        row = f"((SELECT id FROM {_table(Judgment)} WHERE session_id = %s AND document_id = %s), %s, %s)"
        statements.append(
            (
                f"INSERT INTO {_table(JudgmentChange)} (judgment_id, grade, changed_at) VALUES "
                + ", ".join([row] * len(chunk)),
                [
                    value
                    for (session_id, document_id), grade, changed_at in chunk
                    for value in (
                        session_id,
                        document_id,
                        grade,
                        plain_sql.prepared(JudgmentChange, "changed_at", changed_at),
                    )
                ],
            )
        )
    return statements


def _smallest_largest() -> tuple[str, str]:
    """The scalar minimum and maximum of two values in this dialect."""
    return ("LEAST", "GREATEST") if connection.vendor == "postgresql" else ("MIN", "MAX")


def exposures_add(
    session_id: int, position: int, page: int, items: Sequence[tuple[int, ...]], *, cap_ms: int
) -> list[Statement]:
    """An exposure report added to the shown results of a page of a session's query: per rank,
    (rank, start_ms, visible_ms, max_permille, hover_ms, hovers, until_ms) summed into ResultExposure, the
    earliest start, the latest moment on screen (until_ms; 0 reads as none) and the largest fraction kept.
    The visible and hover sums stop at `cap_ms` (the session so far and its slack): reports each within
    the session never add up past it. A rank that page did not show matches no row and adds nothing (the
    report stays in the event log as sent). As many statements as the parameter limit needs."""
    smallest, largest = _smallest_largest()
    table = _table(ResultExposure)
    per_statement = max(1, (plain_sql.MAX_PARAMS - 5) // 7)
    statements = []
    for start in range(0, len(items), per_statement):
        chunk = items[start : start + per_statement]
        statements.append(
            (
                "WITH v (rank, start_ms, visible_ms, max_permille, hover_ms, hovers, until_ms) AS (VALUES "
                + ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * len(chunk))
                + f") INSERT INTO {table}"
                " (shown_result_id, first_visible_ms, visible_ms, max_permille, hover_ms, hovers,"
                " last_visible_ms)"
                " SELECT r.id, v.start_ms, v.visible_ms, v.max_permille, v.hover_ms, v.hovers,"
                " NULLIF(v.until_ms, 0) FROM v"
                f" JOIN {_table(ShownResult)} r ON r.rank = v.rank"
                f" JOIN {_table(Query)} q ON q.id = r.query_id"
                " WHERE q.session_id = %s AND q.position = %s AND r.page = %s"
                " ON CONFLICT (shown_result_id) DO UPDATE SET"
                f" first_visible_ms = {smallest}("
                f"COALESCE({table}.first_visible_ms, excluded.first_visible_ms), excluded.first_visible_ms),"
                f" visible_ms = {smallest}({table}.visible_ms + excluded.visible_ms, %s),"
                f" max_permille = {largest}({table}.max_permille, excluded.max_permille),"
                f" hover_ms = {smallest}({table}.hover_ms + excluded.hover_ms, %s),"
                f" hovers = {table}.hovers + excluded.hovers,"
                f" last_visible_ms = {largest}(COALESCE({table}.last_visible_ms, excluded.last_visible_ms),"
                f" COALESCE(excluded.last_visible_ms, {table}.last_visible_ms))",
                [value for item in chunk for value in item] + [session_id, position, page, cap_ms, cap_ms],
            )
        )
    return statements


def reading_add(session_id: int, position: int, rank: int, read_permille: int) -> Statement:
    """How far the document opened from a shown result was read, the deepest kept
    (ResultExposure.read_permille; the row made if its result was never reported on screen)."""
    _, largest = _smallest_largest()
    table = _table(ResultExposure)
    return (
        f"INSERT INTO {table}"
        " (shown_result_id, first_visible_ms, visible_ms, max_permille, hover_ms, hovers, read_permille)"
        f" SELECT r.id, NULL, 0, 0, 0, 0, %s FROM {_table(ShownResult)} r JOIN {_table(Query)} q"
        " ON q.id = r.query_id WHERE q.session_id = %s AND q.position = %s AND r.rank = %s"
        " ON CONFLICT (shown_result_id) DO UPDATE SET"
        f" read_permille = {largest}(COALESCE({table}.read_permille, 0), excluded.read_permille)",
        [read_permille, session_id, position, rank],
    )


def page_scroll_add(session_id: int, position: int, page: int, scroll_permille: int) -> Statement:
    """The deepest point of a results page seen, kept per (query, page)."""
    _, largest = _smallest_largest()
    table = _table(PageExposure)
    return (
        f"INSERT INTO {table} (query_id, page, scroll_permille)"
        f" SELECT q.id, %s, %s FROM {_table(Query)} q WHERE q.session_id = %s AND q.position = %s"
        f" ON CONFLICT (query_id, page) DO UPDATE SET"
        f" scroll_permille = {largest}({table}.scroll_permille, excluded.scroll_permille)",
        [page, scroll_permille, session_id, position],
    )
