"""Importing an archive's participants: each with their assignments, the sessions with their queries, shown
results and judgments (with history), and the raw event log, its payloads' row ids rewritten to the new
rows. Each checks its rows as it reads them (reader.py)."""

from __future__ import annotations

import datetime as dt
import json

from django.conf import settings
from django.utils import timezone

from studies.interchange.archive.import_exposure import attention_imported, exposures_of, page_exposures_of
from studies.interchange.archive.layout import ACK_IDS
from studies.interchange.archive.lined_json import LinedDict
from studies.interchange.archive.participant_state import participant_state_read, reissues_linked
from studies.interchange.archive.reader import ArchiveReader, Imported
from studies.models import (
    Assignment,
    Event,
    EventOrigin,
    Judgment,
    JudgmentChange,
    PageExposure,
    Participant,
    Query,
    ResultExposure,
    SearchSession,
    ShownResult,
)
from studies.participation.events.event_checks import (
    MAX_SEQUENCE,
    SERVER_EVENT_TYPES,
    TOO_FAR,
    client_time_checked,
)


def participants_imported(done: Imported, data) -> None:
    """The participants (`$.participants`) with their assignments, sessions and events, one participant at
    a time (an event names its own participant's sessions and queries, which exist by then)."""
    r = done.r
    codes: set[str] = set()
    indexes: set[int] = set()
    pending_reissues = []
    for item, where in r.items(data, "participants", "$"):
        code = r.get(item, "code", where, str)
        index = r.get(item, "enrolment_index", where, int)
        r.once(
            codes,
            code,
            item,
            where,
            f"participant code {code!r} or enrolment index {index} is used twice",
            allowed=index not in indexes,
        )
        indexes.add(index)
        participant = Participant.objects.create(
            study=done.study,
            code=code,
            enrolment_index=index,
            questionnaire_answers=r.get(item, "questionnaire_answers", where, dict, default={}),
            consent_version=r.get(item, "consent_version", where, str, default=""),
            consented_at=r.get(item, "consented_at", where, "time", null=True, default=None),
            declined_at=r.get(item, "declined_at", where, "time", null=True, default=None),
            withdrawn_at=r.get(item, "withdrawn_at", where, "time", null=True, default=None),
            created_at=r.get(item, "created_at", where, "time", null=True, default=None) or timezone.now(),
            **participant_state_read(r, item, where),
        )
        if item.get("reissue_of") is not None:
            # Only what linking needs, not the participant's sessions.
            wanted = LinedDict(reissue_of=item["reissue_of"])
            wanted.line = getattr(item, "line", None)
            pending_reissues.append((participant.pk, wanted, where))
        sessions_by_position = _assignments_imported(done, participant, item, where)
        _events_imported(done, participant, sessions_by_position, item, where)
    _reissues_linked(done, pending_reissues)


def _reissues_linked(done: Imported, pending: list[tuple[int, LinedDict, str]]) -> None:
    """participant_state.reissues_linked over the participants that name one, read back without their data."""
    named = {item["reissue_of"] for _pk, item, _where in pending if isinstance(item["reissue_of"], str)}
    rows = Participant.objects.filter(study=done.study).only("pk", "code")
    by_code = {p.code: p for p in rows.filter(code__in=named)}
    reissuing = {p.pk: p for p in rows.filter(pk__in=[pk for pk, _item, _where in pending])}
    reissues_linked(done.r, [(reissuing[pk], item, where) for pk, item, where in pending], by_code)


def _assignments_imported(
    done: Imported, participant: Participant, item, where: str
) -> dict[int, SearchSession]:
    """A participant's assignments (`.assignments`), each with its session; returns the sessions by
    position."""
    r = done.r
    by_position: dict[int, Assignment] = {}
    positions: set[int] = set()
    sessions_by_position: dict[int, SearchSession] = {}
    for a_item, a_where in r.items(item, "assignments", where):
        position = r.get(a_item, "position", a_where, int)
        scenario_code, system_code = (
            r.get(a_item, "scenario", a_where, str),
            r.get(a_item, "system", a_where, str),
        )
        if scenario_code not in done.scenarios:
            r.fail(a_item, f"{a_where}.scenario", f"no scenario {scenario_code!r} in the archive")
        if system_code not in done.systems:
            r.fail(a_item, f"{a_where}.system", f"no system {system_code!r} in the archive")
        retake_of = r.get(a_item, "retake_of", a_where, int, null=True, default=None)
        if retake_of is not None and retake_of not in by_position:
            r.fail(a_item, f"{a_where}.retake_of", f"no earlier assignment at position {retake_of}")
        r.once(
            positions,
            position,
            a_item,
            f"{a_where}.position",
            f"position {position} is used twice or below 1",
            allowed=position >= 1,
        )
        assignment = Assignment.objects.create(
            participant=participant,
            position=position,
            scenario=done.scenarios[scenario_code],
            system=done.systems[system_code],
            retake_of=by_position.get(retake_of) if retake_of else None,
            retake_reason=r.get(a_item, "retake_reason", a_where, str, default=""),
            pre_task_answers=r.get(a_item, "pre_task_answers", a_where, dict, default={}),
        )
        by_position[position] = assignment
        s_item = a_item.get("session")
        if s_item is not None:
            sessions_by_position[position] = _session_imported(
                done, assignment, s_item, f"{a_where}.session", a_item
            )
    return sessions_by_position


def _session_imported(done: Imported, assignment: Assignment, s_item, s_where: str, a_item) -> SearchSession:
    r = done.r
    r.obj(s_item, s_where, a_item)
    session = SearchSession.objects.create(
        assignment=assignment,
        started_at=r.get(s_item, "started_at", s_where, "time"),
        ended_at=r.get(s_item, "ended_at", s_where, "time", null=True, default=None),
        end_reason=r.get(s_item, "end_reason", s_where, str, default=""),
        post_task_answers=r.get(s_item, "post_task_answers", s_where, dict, default={}),
        clock_offset_ms=r.milliseconds(s_item, "clock_offset_ms", s_where),
        clock_delay_ms=r.milliseconds(s_item, "clock_delay_ms", s_where),
    )
    if isinstance(s_item.get("id"), int):
        done.old_ids["session"][s_item["id"]] = session.pk
    _queries_imported(done, s_item, s_where, session)
    attention_imported(done, s_item, s_where, session)
    _judgments_imported(done, s_item, s_where, session)
    return session


def _queries_imported(done: Imported, s_item, s_where: str, session: SearchSession) -> None:
    """A session's queries (`.queries`, numbered 1..n in order) with the results each showed."""
    r = done.r
    queries = []
    for k, (q_item, q_where) in enumerate(r.items(s_item, "queries", s_where), start=1):
        position = r.get(q_item, "position", q_where, int)
        if position != k:
            r.fail(
                q_item, f"{q_where}.position", f"expected position {k} (queries are numbered 1..n in order)"
            )
        query = Query(
            session=session,
            position=position,
            text=r.get(q_item, "text", q_where, str),
            issued_at=r.get(q_item, "issued_at", q_where, "time"),
            scan_mark_rank=r.get(q_item, "scan_mark_rank", q_where, int, null=True, default=None),
            system_message=r.get(q_item, "system_message", q_where, str, default=""),
            first_key_ms=_milliseconds(r, q_item, "first_key_ms", q_where),
            formulation_ms=_milliseconds(r, q_item, "formulation_ms", q_where),
        )
        queries.append((query, q_item, q_where))
    Query.objects.bulk_create([q for q, _i, _w in queries])
    shown_rows, shown_items, scrolls = [], [], []
    for query, q_item, q_where in queries:
        if isinstance(q_item.get("id"), int):
            done.old_ids["query"][q_item["id"]] = query.pk
        ranks: set[int] = set()
        for row, where in r.items(q_item, "shown_results", q_where):
            rank = r.get(row, "rank", where, int)
            r.once(
                ranks, rank, row, f"{where}.rank", f"rank {rank} is below 1 or shown twice", allowed=rank >= 1
            )
            shown_rows.append(
                ShownResult(
                    query=query,
                    rank=rank,
                    document_id=done.document_of(row, where)[0],
                    title=r.get(row, "title", where, str),
                    snippet=r.get(row, "snippet", where, str),
                    page=r.get(row, "page", where, int, default=1),
                    shown_at=r.get(row, "shown_at", where, "time"),
                )
            )
            shown_items.append((shown_rows[-1], row, where))
        scrolls += page_exposures_of(done, query, q_item, q_where)
    ShownResult.objects.bulk_create(shown_rows, batch_size=2000)
    ResultExposure.objects.bulk_create(exposures_of(done, shown_items), batch_size=2000)
    PageExposure.objects.bulk_create(scrolls)


def _milliseconds(r: ArchiveReader, item, key: str, where: str) -> int | None:
    """A query's formulation time: null, or a whole number of milliseconds the column holds."""
    value = r.get(item, key, where, int, null=True, default=None)
    if value is not None and not 0 <= value <= 2**31 - 1:
        r.fail(item, f"{where}.{key}", f"{value!r} is not a number of milliseconds from 0 to {2**31 - 1}")
    return value


def _judgments_imported(done: Imported, s_item, s_where: str, session: SearchSession) -> None:
    """A session's judgments (`.judgments`), each with its history of grades."""
    r = done.r
    changes = []
    judged: set[int] = set()
    for j_item, where in r.items(s_item, "judgments", s_where):
        document_id, external_id = done.document_of(j_item, where)
        r.once(
            judged,
            document_id,
            j_item,
            f"{where}.doc",
            f"document {external_id!r} is judged twice in this session",
        )
        judgment = Judgment.objects.create(
            session=session,
            document_id=document_id,
            grade=done.grade_of(j_item, where),
            created_at=r.get(j_item, "created_at", where, "time"),
            updated_at=r.get(j_item, "updated_at", where, "time"),
        )
        for change, c_where in r.items(j_item, "history", where):
            changes.append(
                JudgmentChange(
                    judgment=judgment,
                    grade=r.get(change, "grade", c_where, int),
                    changed_at=r.get(change, "changed_at", c_where, "time"),
                )
            )
    JudgmentChange.objects.bulk_create(changes, batch_size=2000)


# A participant's events are stored this many at a time, as they are read.
EVENT_BATCH = 2000


def _events_imported(
    done: Imported, participant: Participant, sessions_by_position: dict[int, SearchSession], item, where: str
) -> None:
    """A participant's raw event log (`.events`), once their sessions and queries exist (the payloads name
    them), read and stored a batch at a time."""
    r = done.r
    events: list[Event] = []
    client_ids: set[str] = set()
    event_bytes = 0
    for e_item, e_where in r.items(item, "events", where):
        position = r.get(e_item, "session", e_where, int, null=True, default=None)
        if position is not None and position not in sessions_by_position:
            r.fail(e_item, f"{e_where}.session", f"no session at assignment position {position}")
        client_id = r.get(e_item, "client_event_id", e_where, str)
        r.once(
            client_ids,
            client_id,
            e_item,
            f"{e_where}.client_event_id",
            f"client event id {client_id!r} is used twice",
        )
        payload = _remapped(r.get(e_item, "payload", e_where, dict, default={}), done.old_ids)
        sequence = r.get(e_item, "sequence", e_where, int, null=True, default=None)
        if sequence is not None and not 0 <= sequence <= MAX_SEQUENCE:
            r.fail(e_item, f"{e_where}.sequence", f"{sequence} is outside 0..{MAX_SEQUENCE}")
        server_time = r.get(e_item, "server_time", e_where, "time", null=True, default=None) or timezone.now()
        client_time = _client_time_imported(r, e_item, e_where, server_time, payload)
        kind = r.get(e_item, "type", e_where, str)
        event = Event(
            participant=participant,
            session=sessions_by_position.get(position) if position is not None else None,
            type=kind,
            origin=_origin_imported(r, e_item, e_where, kind, client_id),
            client_event_id=client_id,
            sequence=sequence,
            client_time=client_time,
            server_time=server_time,
            payload=payload,
        )
        event_bytes += _event_bytes(event)
        events.append(event)
        if len(events) == EVENT_BATCH:
            Event.objects.bulk_create(events)
            events = []
    Event.objects.bulk_create(events)
    if event_bytes:
        Participant.objects.filter(pk=participant.pk).update(event_bytes=event_bytes)


def _event_bytes(event: Event) -> int:
    """What the event adds to its participant's quota counter (Participant.event_bytes), as the batch would
    have counted it: a client's event, the size of its data as compact JSON."""
    if event.origin != EventOrigin.CLIENT:
        return 0
    data = event.payload.get("data") if isinstance(event.payload, dict) else None
    return len(json.dumps(data if data is not None else {}, sort_keys=True, separators=(",", ":")))


def _origin_imported(r: ArchiveReader, e_item, e_where: str, kind: str, client_id: str) -> str:
    """Who wrote the event: the archive's `origin`, where an event of a type only the server writes
    (event_checks.SERVER_EVENT_TYPES) cannot say "client". An older archive without the field is read as the
    migration that added it read the database: those types and the server's time-outs are the server's."""
    origin = r.get(e_item, "origin", e_where, str, default=None)
    if origin is None:
        server = kind in SERVER_EVENT_TYPES or (
            kind == "session_end" and client_id.startswith(("server-timeout-", "server-study-timeout-"))
        )
        return EventOrigin.SERVER if server else EventOrigin.CLIENT
    if origin not in EventOrigin.values:
        r.fail(e_item, f"{e_where}.origin", f"{origin!r} is not one of {', '.join(EventOrigin.values)}")
    if origin == EventOrigin.CLIENT and kind in SERVER_EVENT_TYPES:
        r.fail(
            e_item, f"{e_where}.origin", f"a {kind!r} event is written by the server; a client cannot send it"
        )
    return origin


def _client_time_imported(r: ArchiveReader, e_item, e_where: str, server_time, payload: dict):
    """An event's client time, by the rule the events endpoints apply (event_checks.client_time_checked, with
    the archived server time as the receive time). A text that is no time, or one outside years 1-9999 in UTC,
    fails the import (an export never writes one); a time too far from its server time is kept as text in
    the payload's data only, as the endpoints keep it, and the import notes file, line and field."""
    value = e_item.get("client_time")
    where = f"{e_where}.client_time"
    if value is not None and not isinstance(value, str):
        r.fail(e_item, where, f"{value!r} is not an ISO 8601 date and time")
    aware = server_time if server_time.tzinfo else server_time.replace(tzinfo=dt.UTC)
    moment, text, why = client_time_checked(
        value, received_at=aware, window=dt.timedelta(seconds=settings.CLIENT_TIME_WINDOW_SECONDS)
    )
    if why is not None and why != TOO_FAR:
        r.fail(e_item, where, f"{value!r} is {why}")
    if text is not None:
        data = payload.get("data")
        (data if isinstance(data, dict) else payload)["client_time_raw"] = text
        r.notes.append(
            f"{r.path}:{getattr(e_item, 'line', None)}: {where}: {text!r} is {why}; kept as text in"
            " payload.data.client_time_raw"
        )
    return moment


def _remapped(payload: dict, old_ids: dict[str, dict[int, int]]) -> dict:
    """The payload with the exporting server's row ids in its acknowledgement replaced by the new rows'
    ids."""
    ack = payload.get("ack")
    if not isinstance(ack, dict):
        return payload
    ack = dict(ack)
    for key, table in ACK_IDS.items():
        if isinstance(ack.get(key), int) and not isinstance(ack.get(key), bool):
            ack[key] = old_ids[table].get(ack[key], ack[key])
    return {**payload, "ack": ack}
