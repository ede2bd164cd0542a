"""The handlers of the search page's `exposure` and `attention` events (the wire format and its
checks: exposure.py). Registered in event_handlers.HANDLERS. Each report adds to its aggregates
(ResultExposure and PageExposure per shown result and page, AttentionSpan rows per session) with the batch's
writes, without reading anything first: a report is as cheap as the page's other events that need no answer.

Both are accepted after their session has ended (the page flushes what it saw on leaving, like a document's
close), never before consent, never from a withdrawn participant, and never when the study does not record
that family (Study.record_exposure, record_attention)."""

from __future__ import annotations

from collections.abc import Mapping

from sessionlab import plain_sql
from studies.errors import Refused
from studies.models import AttentionSpan
from studies.participation.events import statements
from studies.participation.events.exposure import SLACK_MS, ExposureError, attention_checked, exposure_checked
from studies.participation.events.ingest_batch import Batch
from studies.participation.events.rules import participant_check_consented

NOT_RECORDED = "This study does not record {what}; nothing was stored."


def _session_ms(batch: Batch, raw: Mapping, state) -> int:
    """How long the session has lasted when this report was sent, on its timeline (the report's own time, or
    the session's end when it came later: the page flushes on leaving)."""
    at = batch.at(raw, state)
    if state.ended_at is not None:
        at = max(at, state.ended_at)
    return max(0, int((at - state.started_at).total_seconds() * 1000))


def on_exposure(batch: Batch, raw: Mapping, data: dict) -> dict:
    """Which results of a page were on screen, for how long, and how far the page was scrolled. The query is
    named by position (`query`) or by the client id of its query event (`query_event`)."""
    state = batch.state(raw)
    participant_check_consented(batch.participant)
    if not batch.study.record_exposure:
        raise Refused(NOT_RECORDED.format(what="which results were on screen (exposure)"))
    position = batch.query_position(state, data)
    session_ms = _session_ms(batch, raw, state)
    try:
        report = exposure_checked({**data, "query": position}, session_ms=session_ms)
    except ExposureError as error:
        raise Refused(f"Exposure report: {error}.") from None
    items = [
        (e.rank, e.start_ms, e.visible_ms, e.max_permille, e.hover_ms, e.hovers, e.until_ms)
        for e in report.items
    ]
    batch.writes += statements.exposures_add(
        state.id, report.query, report.page, items, cap_ms=session_ms + SLACK_MS
    )
    if report.scroll_permille is not None:
        batch.writes.append(
            statements.page_scroll_add(state.id, report.query, report.page, report.scroll_permille)
        )
    ack = {"ok": True, "query": report.query, "page": report.page, "ranks": len(items)}
    return batch.log(raw, state, data, ack)


def on_attention(batch: Batch, raw: Mapping, data: dict) -> dict:
    """Stretches of the session when the tab was hidden, the window blurred, or the participant idle."""
    state = batch.state(raw)
    participant_check_consented(batch.participant)
    if not batch.study.record_attention:
        raise Refused(NOT_RECORDED.format(what="when the page was hidden, out of focus or idle (attention)"))
    try:
        spans = attention_checked(data, session_ms=_session_ms(batch, raw, state))
    except ExposureError as error:
        raise Refused(f"Attention report: {error}.") from None
    batch.writes += plain_sql.insert_statements(
        AttentionSpan,
        ("session", "kind", "start_ms", "duration_ms"),
        [(state.id, span.kind, span.start_ms, span.duration_ms) for span in spans],
    )
    return batch.log(raw, state, data, {"ok": True, "spans": len(spans)})
