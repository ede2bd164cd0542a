"""A session played back from its structured log (docs/running-a-study.md, "Replaying a session"):
everything the replay page (static/js/replay.js) draws, read once and written as one JSON object. Times are
milliseconds from the session's start on its timeline (the participant's clock corrected by the session's
offset, docs/time-model.md), so gaps and orders are the participant's.

- `task`: the scenario as the participant read it; `session`: who, which system, how it ended, its duration
  and active time (exposure.active_ms);
- `queries`: each query's text and time, and per page of results the ranks shown with their exposure (visible
  time, largest fraction, hovers) and how far the page was scrolled; a generative system's query has its
  `answer` (text, citations with their places and ranks, follow-ups, model, latency);
- `timeline`: every action in order: query, results page, document open and close (with dwell), judgment,
  scan mark, exposure report, a stretch away (hidden, blur, idle, with its length), the end.
"""

from __future__ import annotations

from datetime import datetime

from studies.models import (
    AnswerTurn,
    AttentionSpan,
    Event,
    EventOrigin,
    JudgmentChange,
    PageExposure,
    SearchSession,
    ShownResult,
)
from studies.participation.events.clock import on_timeline
from studies.participation.events.exposure import AwaySpan, active_ms

# The client's events a replay shows (server-written ones are the forms around the search).
SHOWN_EVENTS = ("document_open", "document_close", "scan_mark", "exposure")


def _ms(moment: datetime | None, start: datetime) -> int | None:
    return None if moment is None else round((moment - start).total_seconds() * 1000)


def _queries(session: SearchSession, start: datetime) -> tuple[list[dict], list[dict]]:
    """The queries with their pages of shown results and exposure; the timeline's query and page entries."""
    queries: dict[int, dict] = {}
    timeline = []
    for query in session.queries.order_by("position"):
        t = _ms(query.issued_at, start)
        queries[query.pk] = {"position": query.position, "text": query.text, "t": t, "pages": {}}
        timeline.append(
            {
                "t": t,
                "kind": "query",
                "query": query.position,
                "text": query.text,
                "first_key_ms": query.first_key_ms,
                "formulation_ms": query.formulation_ms,
            }
        )
    scrolls = {
        (query_id, page): scroll
        for query_id, page, scroll in PageExposure.objects.filter(query__session=session).values_list(
            "query_id", "page", "scroll_permille"
        )
    }
    rows = (
        ShownResult.objects.filter(query__session=session)
        .select_related("document", "exposure")
        .defer("document__text", "document__extra")
        .order_by("query_id", "rank")
    )
    for row in rows:
        pages = queries[row.query_id]["pages"]
        if row.page not in pages:
            pages[row.page] = {"results": [], "scroll_permille": scrolls.get((row.query_id, row.page))}
            if row.page > 1:
                timeline.append(
                    {
                        "t": _ms(row.shown_at, start),
                        "kind": "page",
                        "query": queries[row.query_id]["position"],
                        "page": row.page,
                    }
                )
        exposure = getattr(row, "exposure", None)
        pages[row.page]["results"].append(
            {
                "rank": row.rank,
                "doc": row.document.external_id,
                "title": row.title or row.document.title,
                "snippet": row.snippet,
                "exposure": None if exposure is None else exposure.figures(),
            }
        )
    # A generative system's turn: the answer as it was shown, its citations' places and ranks.
    for turn in AnswerTurn.objects.filter(session=session, query__isnull=False).defer("passages"):
        if turn.query_id not in queries:
            continue
        cited = list(dict.fromkeys(c["doc"] for c in turn.citations))
        queries[turn.query_id]["answer"] = {
            "text": turn.answer_text,
            "citations": [
                {"doc": c["doc"], "rank": cited.index(c["doc"]) + 1, "start": c["start"], "end": c["end"]}
                for c in turn.citations
            ],
            "follow_ups": turn.follow_ups,
            "model": turn.model_name,
            "latency_ms": turn.latency_ms,
        }
    return list(queries.values()), timeline


def _actions(session: SearchSession, start: datetime) -> list[dict]:
    """Opens, closes, scan marks and exposure reports from the log; judgments from their history."""
    timeline = []
    events = Event.objects.filter(session=session, origin=EventOrigin.CLIENT, type__in=SHOWN_EVENTS).order_by(
        "id"
    )
    for kind, client_time, server_time, payload in events.values_list(
        "type", "client_time", "server_time", "payload"
    ):
        ack = (payload or {}).get("ack") or {}
        if not ack.get("ok"):
            continue
        data = (payload or {}).get("data") or {}
        t = _ms(on_timeline(client_time, server_time, session.clock_offset_ms), start)
        if kind in ("document_open", "document_close"):
            entry = {
                "kind": kind.removeprefix("document_"),
                "doc": data.get("doc"),
                "query": data.get("query"),
                "rank": data.get("rank"),
            }
            if kind == "document_close":
                entry["dwell_ms"] = data.get("dwell_ms")
        elif kind == "scan_mark":
            entry = {"kind": "mark", "query": ack.get("query"), "rank": ack.get("rank")}
        else:
            entry = {
                "kind": "exposure",
                "query": ack.get("query"),
                "page": ack.get("page"),
                "ranks": ack.get("ranks"),
            }
        timeline.append({"t": t, **entry})
    for doc, grade, changed_at in (
        JudgmentChange.objects.filter(judgment__session=session)
        .order_by("changed_at", "id")
        .values_list("judgment__document__external_id", "grade", "changed_at")
    ):
        timeline.append({"t": _ms(changed_at, start), "kind": "judgment", "doc": doc, "grade": grade})
    return timeline


def session_replay(*, session: SearchSession) -> dict:
    """Everything the replay page shows of `session` (module docstring)."""
    start = session.started_at
    assignment = session.assignment
    spans = list(AttentionSpan.objects.filter(session=session).order_by("start_ms", "id"))
    duration = _ms(session.ended_at, start)
    queries, timeline = _queries(session, start)
    timeline += _actions(session, start)
    timeline += [
        {"t": span.start_ms, "kind": "away", "what": span.kind, "duration_ms": span.duration_ms}
        for span in spans
    ]
    timeline.append({"t": 0, "kind": "start"})
    if duration is not None:
        timeline.append({"t": duration, "kind": "end", "reason": session.end_reason})
    order = {"start": 0, "end": 2}
    timeline.sort(
        key=lambda entry: (entry["t"] if entry["t"] is not None else 0, order.get(entry["kind"], 1))
    )
    return {
        "task": {"title": assignment.scenario.title, "text": assignment.scenario.text},
        "session": {
            "id": session.pk,
            "participant": assignment.participant.code,
            "position": assignment.position,
            "scenario": assignment.scenario.code,
            "system": assignment.system.code,
            "end_reason": session.end_reason,
            "duration_ms": duration,
            "active_ms": None
            if duration is None
            else active_ms([AwaySpan(s.kind, s.start_ms, s.duration_ms) for s in spans], max(0, duration)),
        },
        "queries": queries,
        "timeline": timeline,
    }
