"""`session_track_export`: a study's sessions as a Session Track log (UTF-8 XML), written element by
element. Sessions imported from a log are written as they were read (the session_start event keeps what the
log held)."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Iterator

from sessionlab.rounds import in_rounds
from studies.kernel.event_log import events_read
from studies.models import Event, EventOrigin, Query, SearchSession, ShownResult, Study
from studies.participation.events.clock import on_timeline

# Sessions read per round (their queries, shown results and events with them).
SESSIONS_PER_CHUNK = 200


def _clock_text(moment: dt.datetime | None) -> str:
    return moment.astimezone(dt.UTC).strftime("%H:%M:%S.%f") if moment is not None else ""


class _TimeWriter:
    """A time in the log's notation: as read when the import kept it (`raw`), else from the timeline (a time
    of day, or seconds from midnight of the session's first day, the zero the import placed them on)."""

    def __init__(self, notation: str, started: dt.datetime | None):
        self.notation = notation
        self.midnight = (
            None
            if started is None
            else dt.datetime.combine(started.astimezone(dt.UTC).date(), dt.time(), tzinfo=dt.UTC)
        )

    def text(self, moment: dt.datetime | None, raw: str | None = None) -> str:
        if raw is not None:
            return raw
        if moment is None:
            return "NA"
        if self.notation == "seconds" and self.midnight is not None:
            return f"{(moment - self.midnight).total_seconds():.6f}"
        return _clock_text(moment)


def _sub(parent, tag: str, text: str | None = None, /, **attrs) -> ET.Element:
    element = ET.SubElement(parent, tag, {k: str(v) for k, v in attrs.items()})
    if text is not None:
        element.text = text
    return element


def _when(event: Event, offset_ms: float | None) -> dt.datetime:
    """The event's time on its session's timeline (docs/time-model.md), as queries' issued_at are."""
    moment = on_timeline(event.client_time, event.server_time, offset_ms)
    assert moment is not None  # an event row always has its server time
    return moment


def session_track_export(*, study: Study) -> bytes:
    """The study's log whole in memory (session_track_stream joined)."""
    return b"".join(session_track_stream(study=study))


def session_track_stream(*, study: Study, chunk_size: int = SESSIONS_PER_CHUNK) -> Iterator[bytes]:
    """The study's sessions as a Session Track log (UTF-8 XML), a <session> at a time, reading `chunk_size`
    sessions per round. Sessions imported from a log are written as they were read (texts, attributes and
    each time in the log's own notation, NA kept); others get session numbers in order of participant and
    position, topic = the scenario (topic_id, title as subject, text as desc), clicks from document_open
    events (end time from the matching document_close, NA without one)."""
    scope = SearchSession.objects.filter(
        assignment__participant__study=study,  # never a preview's
        assignment__participant__preview_at__isnull=True,
    )
    # The log's root and id tag are the first imported session's (the import keeps them on its start event).
    first = (
        Event.objects.filter(
            session__in=scope.values("pk"),
            type="session_start",
            origin=EventOrigin.SERVER,
            payload__data__has_key="session_track",
        )
        .order_by("session__assignment__participant__enrolment_index", "session__assignment__position", "-id")
        .values_list("payload__data__session_track", flat=True)
        .first()
    )
    first = first if isinstance(first, dict) else {}
    root_tag, id_tag = first.get("root", "sessiontrack2012"), first.get("id_tag", "clueweb09id")
    sessions = scope.order_by("assignment__participant__enrolment_index", "assignment__position")
    return _log_chunks(sessions, root_tag, id_tag, chunk_size)


def _log_chunks(sessions, root_tag: str, id_tag: str, chunk_size: int) -> Iterator[bytes]:
    """The log as ET.indent(root, "   ") and ET.tostring write it whole, a round of sessions at a time: each
    <session> indented as the root's child, after the newline and indent its tail would hold."""
    yield b'<?xml version="1.0" encoding="UTF-8"?>\n'
    number = 0
    rows = SearchSession.objects.select_related("assignment__participant", "assignment__scenario")
    for chunk in in_rounds(sessions, rows, chunk_size):
        if not chunk:  # every session of the round deleted meanwhile
            continue
        yield (b"" if number else f"<{root_tag}>".encode()) + _sessions_xml(chunk, number, id_tag)
        number += len(chunk)
    yield f"\n</{root_tag}>\n".encode() if number else ET.tostring(ET.Element(root_tag)) + b"\n"


def _sessions_xml(sessions: list[SearchSession], before: int, id_tag: str) -> bytes:
    rows = _StudyRows(sessions)
    parts = []
    for number, session in enumerate(sessions, start=before + 1):
        holder = ET.Element("holder")
        _session_written(holder, number, session, rows.start_info(session), rows, id_tag)
        (element,) = holder
        ET.indent(element, space="   ", level=1)
        parts.append(b"\n   " + ET.tostring(element, encoding="utf-8"))
    return b"".join(parts)


class _StudyRows:
    """A round of sessions with their queries, shown results and events, each read in one query."""

    def __init__(self, sessions: list[SearchSession]):
        ids = [session.pk for session in sessions]
        self.queries = defaultdict(list)
        for query in Query.objects.filter(session__in=ids).order_by("session_id", "position"):
            self.queries[query.session_id].append(query)
        self.results = defaultdict(list)
        for row in (
            ShownResult.objects.filter(query__session__in=ids)
            .select_related("document")
            .defer("document__text", "document__title")  # a round holds the ids and urls, not the texts
            .order_by("query_id", "rank")
        ):
            self.results[row.query_id].append(row)
        self.events = defaultdict(list)
        for event in events_read(Event.objects.filter(session__in=ids).order_by("id")):  # old rows' times
            self.events[event.session_id].append(event)

    def start_info(self, session: SearchSession) -> dict:
        """What the import kept of the session's log (its last session_start event's), or {}."""
        for event in reversed(self.events[session.pk]):
            if (
                event.type == "session_start"
                and event.origin == EventOrigin.SERVER
                and "session_track" in (event.payload.get("data") or {})
            ):
                return event.payload["data"]["session_track"]
        return {}


class _SessionEvents:
    """A session's events by what the log writes from them: the query events' data by query position, the
    document opens by query position, the closes by (query, document, click), the current query."""

    def __init__(self, events: list[Event]):
        self.query_data: dict = {}
        self.opens: defaultdict[int | None, list[Event]] = defaultdict(list)
        self.closes: dict[tuple, list[Event]] = {}
        self.current: Event | None = None
        for event in events:
            data = event.payload.get("data") or {}
            ack = event.payload.get("ack") or {}
            if event.type == "query" and ack.get("ok"):
                self.query_data[ack.get("query")] = data
            elif event.type == "document_open" and ack.get("ok"):
                self.opens[data.get("query")].append(event)
            elif event.type == "document_close" and ack.get("ok"):
                key = (data.get("query"), data.get("doc"), data.get("click"))
                self.closes.setdefault(key, []).append(event)
            elif event.type == "current_query":
                self.current = event


def _session_written(root, number: int, session: SearchSession, info: dict, rows: _StudyRows, id_tag: str):
    """A <session> with its topic, interactions and current query."""
    times = _TimeWriter(info.get("notation", "clock"), session.started_at)
    scenario = session.assignment.scenario
    attrs = {"num": info.get("session", number)}
    if "starttime" not in info or info["starttime"] is not None:
        attrs["starttime"] = times.text(session.started_at, info.get("starttime"))
    if scenario.practice:  # a practice task, never scored: the format has no element for it, so an attribute
        attrs["practice"] = "1"
    session_element = _sub(root, "session", **attrs, **info.get("attrs", {}))
    topic = info.get("topic") or {
        "num": scenario.topic_id,
        "attrs": {},
        "subject": scenario.title,
        "subject_num": None,
        "desc": scenario.text,
        "narr": None,
    }
    topic_element = _sub(session_element, "topic", num=topic["num"], **topic.get("attrs", {}))
    if topic.get("subject") is not None:
        attrs = {"num": topic["subject_num"]} if topic.get("subject_num") is not None else {}
        _sub(topic_element, "subject", topic["subject"], **attrs)
    _sub(topic_element, "desc", topic["desc"])
    if topic.get("narr") is not None:
        _sub(topic_element, "narr", topic["narr"])
    events = _SessionEvents(rows.events[session.pk])
    for query in rows.queries[session.pk]:
        data = events.query_data.get(query.position, {})
        interaction = _sub(
            session_element,
            "interaction",
            num=data.get("interaction", query.position),
            starttime=times.text(query.issued_at, (data.get("times") or {}).get("start")),
            **data.get("attrs", {}),
        )
        _sub(interaction, "query", query.text)
        ranks = _results_written(interaction, rows.results[query.pk], data.get("urls", {}), id_tag)
        _clicks_written(interaction, query, session, events, ranks, times)
    if events.current is not None:
        data = events.current.payload.get("data") or {}
        attrs = {}
        if data.get("has_time", True):
            attrs["starttime"] = times.text(events.current.client_time, data.get("starttime"))
        _sub(_sub(session_element, "currentquery", **attrs), "query", data.get("text", ""))


def _results_written(interaction, shown: list[ShownResult], other_urls: dict, id_tag: str) -> dict[str, int]:
    """The <results> of an interaction; returns each document's first rank."""
    results_element = _sub(interaction, "results")
    ranks: dict[str, int] = {}
    for row in shown:
        ranks.setdefault(row.document.external_id, row.rank)
        result = _sub(results_element, "result", rank=row.rank)
        _sub(result, "url", other_urls.get(str(row.rank), (row.document.extra or {}).get("url") or ""))
        _sub(result, id_tag, row.document.external_id)
        _sub(result, "title", row.title)
        _sub(result, "snippet", row.snippet)
    return ranks


def _clicks_written(
    interaction, query: Query, session: SearchSession, events: _SessionEvents, ranks: dict, times: _TimeWriter
) -> None:
    """The <clicked> of an interaction: a click per document opened, its end from the first close after it."""
    clicked = _sub(interaction, "clicked")
    offset = session.clock_offset_ms
    for index, opened in enumerate(events.opens.get(query.position, []), start=1):
        data = opened.payload["data"]
        rank = data.get("rank") if isinstance(data.get("rank"), int) else ranks.get(data.get("doc"))
        if rank is None:
            continue
        raw = data.get("times") or {}
        pending = events.closes.get((query.position, data.get("doc"), data.get("click")), [])
        closed = next((c for c in pending if _when(c, offset) >= _when(opened, offset)), None)
        if closed is not None:
            pending.remove(closed)
        click = _sub(
            clicked,
            "click",
            num=data.get("click", index),
            starttime=times.text(_when(opened, offset), raw.get("start")),
            endtime=times.text(_when(closed, offset) if closed is not None else None, raw.get("end")),
            **data.get("attrs", {}),
        )
        _sub(click, "rank", str(rank))
        for tag, text in data.get("extra", []):
            _sub(click, tag, text)
