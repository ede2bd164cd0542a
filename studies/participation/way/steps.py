"""The participant's way through a study: writes, one service per action (`<entity>_<action>`, keyword-only).

Every action carries the client's event id (unique per participant) and a sequence number, and is stored as
one Event. A re-sent action (same client event id) returns what the first one produced: the stored
acknowledgement, expanded from the rows it built (a re-sent query returns the same stored results; it does not
search again or add a Query). Rows built from an action (Query + ShownResult, Judgment + JudgmentChange, a
scan mark, a session's end) are written in the same transaction as its Event.

Event.payload is {"data": <what the client sent>, "ack": <what the server answered>}: the raw log keeps both.

Refusals raise `Refused` (a plain message for the participant); `events_ingest` stores a refused event with
its refusal, so a re-send is refused the same way and the client can drop it.

The steps by a form (consent, the questionnaires, a session's start) are in form_steps.py; this module holds
the search page's steps (batches of one through events/ingest.py), withdrawal and the browser's event
batches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from studies.errors import Refused
from studies.models import (
    Assignment,
    AuditAction,
    AuditEntry,
    Event,
    Judgment,
    Participant,
    Query,
    SearchSession,
)
from studies.participation.events.ingest import batch_ingest
from studies.participation.events.rules import MAX_BATCH, MAX_BODY_EVENTS, client_id_check, sessions_changed
from studies.participation.recruitment.states import WITHDRAWN, participant_state_set
from studies.signals import participant_withdrawn

# --- searching: batches of one through studies/participation/events/ingest.py
# ----------------------------------


def _one(
    participant: Participant,
    session: SearchSession,
    kind: str,
    data: dict,
    client_event_id: str,
    sequence: int | None,
    client_time,
) -> dict:
    """One search-page event, checked and stored as the browser's batches are; a refusal raises Refused and
    stores nothing. Returns the acknowledgement (with the results of a page, the text of a document
    opened)."""
    client_id_check(client_event_id)
    event = {
        "id": client_event_id,
        "type": kind,
        "session": session.pk,
        "seq": sequence,
        "time": client_time,
        "data": data,
    }
    ack = batch_ingest(participant=participant, events=[event], store_refusals=False)[0]
    ack.pop("id")
    return ack


def query_log(
    *,
    participant: Participant,
    session: SearchSession,
    text: str,
    client_event_id: str,
    sequence: int | None = None,
    client_time=None,
    formulation: Mapping | None = None,
) -> dict:
    """Run the query on the session's system; store Query + ShownResults (page 1) + Event in one transaction.
    `formulation`: how long it took to write ({"first_key_ms", "submit_ms"}, as the page reports it).

    Returns {"ok", "query" (position), "query_id", "page", "total", "message", "query_used", "results"}."""
    data: dict = {"text": text}
    if formulation is not None:
        data["formulation"] = dict(formulation)
    return _one(participant, session, "query", data, client_event_id, sequence, client_time)


def results_page_log(
    *,
    participant: Participant,
    session: SearchSession,
    query_position: int,
    page: int,
    client_event_id: str,
    sequence: int | None = None,
    client_time=None,
) -> dict:
    """Show page `page` of a query: the first showing of a page searches and stores its ShownResults; a page
    shown before is served from what was stored. Each showing is an Event."""
    return _one(
        participant,
        session,
        "results_page",
        {"query": query_position, "page": page},
        client_event_id,
        sequence,
        client_time,
    )


def document_view_log(
    *,
    participant: Participant,
    session: SearchSession,
    action: str,
    doc: str,
    client_event_id: str,
    query_position: int | None = None,
    rank: int | None = None,
    dwell_ms: int | None = None,
    sequence: int | None = None,
    client_time=None,
) -> dict:
    """A document opened (the answer carries its title and text) or closed (with the client's dwell time in
    milliseconds). Only documents shown in this session can be opened; a close is logged even after the
    session ended, so the dwell time of a document open at the stop is kept."""
    if action not in ("open", "close"):
        raise Refused("A document is opened or closed.")
    return _one(
        participant,
        session,
        f"document_{action}",
        {"doc": doc, "query": query_position, "rank": rank, "dwell_ms": dwell_ms},
        client_event_id,
        sequence,
        client_time,
    )


def judgment_record(
    *,
    participant: Participant,
    session: SearchSession,
    doc: str,
    grade: int,
    client_event_id: str,
    sequence: int | None = None,
    client_time=None,
) -> dict:
    """Judge (or re-judge) a shown document: the Judgment holds the current grade, every change is kept in
    JudgmentChange. The grade must be one of the study's grade levels."""
    return _one(
        participant, session, "judgment", {"doc": doc, "grade": grade}, client_event_id, sequence, client_time
    )


def scan_mark_record(
    *,
    participant: Participant,
    session: SearchSession,
    query_position: int,
    rank: int,
    client_event_id: str,
    sequence: int | None = None,
    client_time=None,
) -> dict:
    """ "I stopped scanning here" at `rank` of a query's results; the query keeps the deepest rank marked."""
    return _one(
        participant,
        session,
        "scan_mark",
        {"query": query_position, "rank": rank},
        client_event_id,
        sequence,
        client_time,
    )


def exposure_record(
    *,
    participant: Participant,
    session: SearchSession,
    query_position: int,
    page: int,
    items: Sequence[Sequence[int]],
    scroll_permille: int | None,
    client_event_id: str,
    sequence: int | None = None,
    client_time=None,
) -> dict:
    """What of a results page was on screen (studies/participation/events/exposure.py's report: per rank
    [rank, start_ms, visible_ms, max_permille, hover_ms, hovers, until_ms]), as the page's exposure.js sends
    it."""
    data: dict = {"query": query_position, "page": page, "items": [list(item) for item in items]}
    if scroll_permille is not None:
        data["scroll_permille"] = scroll_permille
    return _one(participant, session, "exposure", data, client_event_id, sequence, client_time)


def attention_record(
    *,
    participant: Participant,
    session: SearchSession,
    spans: Sequence[Sequence],
    client_event_id: str,
    sequence: int | None = None,
    client_time=None,
) -> dict:
    """Stretches of the session when the participant was away ([kind, start_ms, duration_ms])."""
    data = {"spans": [list(span) for span in spans]}
    return _one(participant, session, "attention", data, client_event_id, sequence, client_time)


def session_end(
    *,
    participant: Participant,
    session: SearchSession,
    reason: str,
    client_event_id: str,
    sequence: int | None = None,
    client_time=None,
) -> dict:
    """End the session: "satisfied" (I found what I need), "gave_up", or "timed_out" (the time limit ran
    out)."""
    try:
        return _one(
            participant, session, "session_end", {"reason": reason}, client_event_id, sequence, client_time
        )
    finally:
        session.refresh_from_db(fields=["ended_at", "end_reason"])


# --- withdrawal -----------------------------------------------------------------------------------------


@transaction.atomic
def participant_withdraw(*, participant: Participant, by: str = "participant") -> AuditEntry | None:
    """Withdraw: delete the participant's events, judgments (with their history), queries (with the results
    shown) and questionnaire answers; end their sessions as withdrawn. Their state becomes withdrawn in the
    same transaction, so their plan row is free for the next arrival at once, not at the next sweep. An
    AuditEntry records that it happened and how many rows went, never what they held (the state's entry says
    `by`: the participant or the researcher). The withdrawal is announced (studies.signals.
    participant_withdrawn) inside the transaction, so the participant's scores leave every scoring run with
    it; the entry's row then also says what went there (detail["scores"]; the object returned holds only
    `deleted`, as written here). Withdrawing twice does nothing the second time."""
    participant = Participant.objects.select_for_update().get(pk=participant.pk)
    if participant.withdrawn_at is not None:
        return None
    now = timezone.now()
    sessions = SearchSession.objects.filter(assignment__participant=participant)
    counts = {
        "events": Event.objects.filter(participant=participant).delete()[1].get("studies.Event", 0),
        "judgments": Judgment.objects.filter(session__in=sessions).delete()[1].get("studies.Judgment", 0),
        "queries": Query.objects.filter(session__in=sessions).delete()[1].get("studies.Query", 0),
        "sessions": sessions.count(),
    }
    # One UPDATE each: an open session must get its end time and reason together (a check constraint).
    sessions.filter(ended_at__isnull=True).update(ended_at=now, end_reason=SearchSession.EndReason.WITHDRAWN)
    sessions.update(end_reason=SearchSession.EndReason.WITHDRAWN, post_task_answers={})
    Assignment.objects.filter(participant=participant).update(pre_task_answers={})
    participant.withdrawn_at = now
    participant.questionnaire_answers = {}
    participant.save(update_fields=["withdrawn_at", "questionnaire_answers"])
    reason = "withdrawn by the researcher" if by == "researcher" else "withdrew"
    participant_state_set(participant=participant, state=WITHDRAWN, reason=reason, now=now)
    session_rows = list(sessions.values_list("pk", "assignment__scenario_id"))
    if session_rows:
        sessions_changed(participant.study_id, [pk for pk, _ in session_rows], [sc for _, sc in session_rows])
    entry = AuditEntry.objects.create(
        study=participant.study,
        participant_code=participant.code,
        action=AuditAction.PARTICIPANT_WITHDRAWN,
        detail={"deleted": counts},
    )
    # In this transaction: scoring deletes the participant's scores from every run (scoring/receivers.py) and
    # adds what went to the entry; if it fails, nothing of the withdrawal is kept.
    participant_withdrawn.send(
        sender=Participant,
        study_id=participant.study_id,
        participant_id=participant.pk,
        session_ids=[pk for pk, _ in session_rows],
        audit_entry_id=entry.pk,
    )
    return entry


# --- the browser's event batches ------------------------------------------------------------------------


def body_too_large(content_length) -> str | None:
    """Why an events body is refused whole for its size before it is read (413), or None: one limit,
    EVENTS_MAX_BODY_BYTES, on both events endpoints (the page's batch and the participant API)."""
    limit = settings.EVENTS_MAX_BODY_BYTES
    length = str(content_length or "0")
    if not length.isdigit() or int(length) > limit:
        return f"a batch body holds at most {limit} bytes (EVENTS_MAX_BODY_BYTES)"
    return None


def too_many_events(events: Sequence) -> str | None:
    """Why a batch body is refused whole for its length (the endpoints answer 413), or None."""
    if len(events) > MAX_BODY_EVENTS:
        return f"a batch holds at most {MAX_BATCH} events (this one has {len(events)})"
    return None


def events_ingest(*, participant: Participant, events: Sequence[Mapping], clock_sample=None) -> list[dict]:
    """Store a batch of client events in order, each once by its client event id; one acknowledgement per
    event (studies/participation/events/ingest.py says how). clock_sample: the batch's estimate of the
    client's clock offset (participation/events/clock.py)."""
    return batch_ingest(participant=participant, events=events, capped=True, clock_sample=clock_sample)
