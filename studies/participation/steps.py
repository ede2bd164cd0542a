"""The participant's way through a study: writes, one service per action (`<entity>_<action>`, keyword-only).

Every action carries the client's event id (unique per participant) and a sequence number, and is stored as
one Event. A re-sent action (same client event id) returns what the first one produced: the stored
acknowledgement, expanded from the rows it built (a re-sent query returns the same stored results; it does not
search again or add a Query). Rows built from an action (Query + ShownResult, Judgment + JudgmentChange, a scan
mark, a session's end) are written in the same transaction as its Event.

Event.payload is {"data": <what the client sent>, "ack": <what the server answered>}: the raw log keeps both.

Refusals raise `Refused` (a plain message for the participant); `events_ingest` stores a refused event with its
refusal, so a re-send is refused the same way and the client can drop it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from studies.design.gold import gold_pending
from studies.design.lifecycle import participant_check_accepting
from studies.design.questionnaires import (
    DEFAULT_POST_TASK_QUESTIONNAIRE,
    DEFAULT_QUESTIONNAIRE,
    questionnaire_errors,
    usable_items,
)
from studies.design.selectors import participant_step
from studies.errors import InvalidAnswers, Refused
from studies.models import (
    Assignment,
    AuditEntry,
    Event,
    Judgment,
    Participant,
    Query,
    SearchSession,
)
from studies.participation.event_checks import text_clean
from studies.participation.ingest import batch_ingest
from studies.participation.recruitment import checks_progress
from studies.participation.rules import (
    MAX_BATCH,
    MAX_BODY_EVENTS,
    client_id_check,
    event_create,
    participant_check_active,
    participant_check_consented,
    session_clock_start,
    session_expire_if_due,
    sessions_changed,
)

logger = logging.getLogger(__name__)

# --- questionnaires -------------------------------------------------------------------------------------


def questionnaire_items(*, study, post_task: bool = False, pre_task: bool = False) -> list[dict]:
    """The items of the pre-study questionnaire, or the post-task or pre-task one. The first two fall back to
    their defaults; the pre-task one has none (empty: no questions before each task)."""
    stored = (
        study.post_task_questionnaire
        if post_task
        else study.pre_task_questionnaire
        if pre_task
        else study.questionnaire
    )
    # A malformed item (stored before the API checked them, or by a path that does not) is left out, not a 500.
    items = usable_items(stored)
    if len(items) != (len(stored) if isinstance(stored, list) else 1 if stored else 0):
        logger.warning(
            "study %s: malformed %squestionnaire items left out: %s",
            study.slug,
            "post-task " if post_task else "pre-task " if pre_task else "",
            "; ".join(questionnaire_errors(stored)),
        )
    if pre_task:
        return items
    return items or (DEFAULT_POST_TASK_QUESTIONNAIRE if post_task else DEFAULT_QUESTIONNAIRE)


def answers_clean(items: Sequence[Mapping], data: Mapping[str, Any]) -> dict[str, Any]:
    """Answers checked against the items ({"name", "label", "kind": integer|scale|number|text|choice, "min",
    "max", "choices", "required" (default true)}); raises InvalidAnswers({name: message})."""
    cleaned: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for item in items:
        name, kind = item["name"], item.get("kind", "text")
        raw = data.get(name, "")
        raw = "" if raw is None else str(raw).strip()
        if raw == "":
            if item.get("required", True):
                errors[name] = "Please answer this question."
            cleaned[name] = None
            continue
        if kind in ("integer", "scale", "number"):
            try:
                value = int(raw) if kind != "number" else float(raw)
                if not math.isfinite(value):  # "nan", "1e999": JSON cannot hold them
                    raise ValueError(raw)
            except ValueError:
                errors[name] = "Please give a number." if kind == "number" else "Please give a whole number."
                continue
            low, high = item.get("min"), item.get("max")
            if (low is not None and value < low) or (high is not None and value > high):
                errors[name] = f"Please give a number from {low} to {high}."
                continue
            cleaned[name] = value
        elif kind == "choice":
            choices = [str(c) for c in item.get("choices", [])]
            if raw not in choices:
                errors[name] = "Please pick one of the options."
                continue
            cleaned[name] = raw
        else:
            cleaned[name] = text_clean(raw[:2000])[0]  # a NUL cannot be stored (PostgreSQL's jsonb)
    if errors:
        raise InvalidAnswers(errors)
    return cleaned


# --- events ---------------------------------------------------------------------------------------------


def _stored(participant: Participant, client_event_id: str) -> Event | None:
    # Not its client time: a row stored before the client-time rule may hold one Python cannot read.
    return (
        Event.objects.filter(participant=participant, client_event_id=client_event_id)
        .defer("client_time")
        .first()
    )


def _replay(participant: Participant, client_event_id: str) -> dict | None:
    event = _stored(participant, client_event_id)
    return None if event is None else (event.payload.get("ack") or {"ok": True})


def _once(participant: Participant, client_event_id: str, write: Callable[[], dict]) -> dict:
    """Run `write` (which stores the Event) in a transaction, unless the event is already stored; a concurrent
    duplicate (two tabs sending the same form) loses on the unique constraint and returns the winner's answer.
    (The search page's events go through studies/participation/ingest.py, a batch at a time.)"""
    replay = _replay(participant, client_event_id)
    if replay is not None:
        return replay
    try:
        with transaction.atomic():
            return write()
    except IntegrityError:
        replay = _replay(participant, client_event_id)
        if replay is None:
            raise
        return replay


# --- checks ---------------------------------------------------------------------------------------------


def _check_own(participant: Participant, session: SearchSession) -> None:
    if session.assignment.participant_id != participant.pk:
        raise Refused("This is not one of your search sessions.")


# --- the steps before searching -------------------------------------------------------------------------


def consent_record(
    *,
    participant: Participant,
    consent_version: str,
    client_event_id: str,
    sequence: int | None = None,
    client_time=None,
) -> Participant:
    """Record consent to the consent text of version `consent_version` (the version the page showed)."""
    client_id_check(client_event_id)
    participant_check_active(participant)
    if participant.consented_at is not None:
        return participant
    participant_check_accepting(participant)  # paused or closed: no new step (studies/design/lifecycle.py)
    study = participant.study
    if consent_version != study.consent_version:
        raise Refused("The consent text has changed since the page was loaded; please read it again.")

    def write():
        now = timezone.now()
        updated = Participant.objects.filter(pk=participant.pk, consented_at__isnull=True).update(
            consented_at=now, consent_version=study.consent_version
        )
        if updated:
            participant.consented_at, participant.consent_version = now, study.consent_version
        ack = {"ok": True, "consent_version": study.consent_version}
        event_create(
            participant=participant,
            session=None,
            type="consent",
            client_event_id=client_event_id,
            sequence=sequence,
            client_time=client_time,
            data={"consent_version": consent_version},
            ack=ack,
        )
        return ack

    _once(participant, client_event_id, write)
    participant.refresh_from_db(fields=["consented_at", "consent_version"])
    return participant


def consent_decline(
    *, participant: Participant, client_event_id: str, sequence: int | None = None, client_time=None
) -> Participant:
    """The participant declines: nothing else about them is recorded (the Event says only that they declined)."""
    client_id_check(client_event_id)
    if _stored(participant, client_event_id) is not None:  # the decline sent again: the same answer
        return participant
    participant_check_active(participant)
    if participant.consented_at is not None:
        raise Refused("You have already agreed to take part; to stop, withdraw from the study instead.")

    def write():
        now = timezone.now()
        if Participant.objects.filter(pk=participant.pk, declined_at__isnull=True).update(declined_at=now):
            participant.declined_at = now
        ack = {"ok": True}
        event_create(
            participant=participant,
            session=None,
            type="consent_declined",
            client_event_id=client_event_id,
            sequence=sequence,
            client_time=client_time,
            data={},
            ack=ack,
        )
        return ack

    _once(participant, client_event_id, write)
    participant.refresh_from_db(fields=["declined_at"])
    return participant


def questionnaire_save(
    *,
    participant: Participant,
    answers: Mapping[str, Any],
    client_event_id: str,
    sequence: int | None = None,
    client_time=None,
) -> Participant:
    """Save the pre-study questionnaire (once). Raises InvalidAnswers with a message per question."""
    client_id_check(client_event_id)
    participant_check_consented(participant)
    if _stored(participant, client_event_id) is not None or participant.questionnaire_answers:
        return participant
    participant_check_accepting(participant)
    cleaned = answers_clean(questionnaire_items(study=participant.study), answers)

    def write():
        Participant.objects.filter(pk=participant.pk).update(questionnaire_answers=cleaned)
        participant.questionnaire_answers = cleaned
        ack = {"ok": True}
        event_create(
            participant=participant,
            session=None,
            type="questionnaire",
            client_event_id=client_event_id,
            sequence=sequence,
            client_time=client_time,
            data={"answers": cleaned},
            ack=ack,
        )
        return ack

    _once(participant, client_event_id, write)
    return participant


def session_start(
    *,
    participant: Participant,
    assignment: Assignment,
    client_event_id: str,
    sequence: int | None = None,
    client_time=None,
) -> SearchSession:
    """Start (or resume) the search session of the participant's current assignment."""
    client_id_check(client_event_id)
    participant_check_consented(participant)
    if assignment.participant_id != participant.pk:
        raise Refused("This is not one of your scenarios.")
    if not participant.questionnaire_answers:
        raise Refused("Please answer the questionnaire first.")
    if checks_progress(participant).pending:  # the study's attention and comprehension checks come first
        raise Refused("Please answer the questions before the tasks first.")
    existing = SearchSession.objects.filter(assignment=assignment).first()
    if existing is not None:
        if existing.ended_at is not None:
            raise Refused("This scenario is finished and cannot be worked again.")
        return existing
    participant_check_accepting(participant)  # a started session goes on; a new one waits while paused
    step = participant_step(participant=participant)
    if step.kind == "pre_task" and step.assignment.pk == assignment.pk:
        raise Refused("Please answer the questions before this task first.")
    if step.kind != "scenario" or step.assignment.pk != assignment.pk:
        raise Refused("Please work the scenarios in the order given.")

    def write():
        # On the session's timeline (docs/time-model.md), with its first clock estimate.
        session = SearchSession.objects.create(
            assignment=assignment,
            **session_clock_start(participant=participant, client_time=client_time, now=timezone.now()),
        )
        ack = {"ok": True, "session": session.pk}
        event_create(
            participant=participant,
            session=session,
            type="session_start",
            client_event_id=client_event_id,
            sequence=sequence,
            client_time=client_time,
            data={"assignment": assignment.position},
            ack=ack,
        )
        return ack

    ack = _once(participant, client_event_id, write)
    return SearchSession.objects.get(pk=ack["session"]) if "session" in ack else assignment.session


# --- searching: batches of one through studies/participation/ingest.py ------------------------------------------------


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
    stores nothing. Returns the acknowledgement (with the results of a page, the text of a document opened)."""
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
) -> dict:
    """Run the query on the session's system and store Query + ShownResults (page 1) + Event in one transaction.

    Returns {"ok", "query" (position), "query_id", "page", "total", "message", "query_used", "results"}."""
    return _one(participant, session, "query", {"text": text}, client_event_id, sequence, client_time)


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


def session_end(
    *,
    participant: Participant,
    session: SearchSession,
    reason: str,
    client_event_id: str,
    sequence: int | None = None,
    client_time=None,
) -> dict:
    """End the session: "satisfied" (I found what I need), "gave_up", or "timed_out" (the time limit ran out)."""
    try:
        return _one(
            participant, session, "session_end", {"reason": reason}, client_event_id, sequence, client_time
        )
    finally:
        session.refresh_from_db(fields=["ended_at", "end_reason"])


def pre_task_save(
    *,
    participant: Participant,
    assignment: Assignment,
    answers: Mapping[str, Any],
    client_event_id: str,
    sequence: int | None = None,
    client_time=None,
) -> Assignment:
    """Save the answers to the study's questions before a task (once per assignment), before its session
    starts. Refused out of order, once the session started, or when the study asks none. Raises
    InvalidAnswers with a message per question."""
    client_id_check(client_event_id)
    participant_check_consented(participant)
    if assignment.participant_id != participant.pk:
        raise Refused("This is not one of your scenarios.")
    if _stored(participant, client_event_id) is not None:
        return assignment
    if assignment.pre_task_answers:
        raise Refused("You have already answered these questions.")
    if SearchSession.objects.filter(assignment=assignment).exists():
        raise Refused("This task has started already: its questions come before it.")
    participant_check_accepting(participant)
    if checks_progress(
        participant
    ).pending:  # the study's checks come before the first task, as for its start
        raise Refused("Please answer the questions before the tasks first.")
    step = participant_step(participant=participant)
    if step.kind != "pre_task" or step.assignment.pk != assignment.pk:
        raise Refused("Please work the scenarios in the order given.")
    cleaned = answers_clean(questionnaire_items(study=participant.study, pre_task=True), answers)

    def write():
        if not Assignment.objects.filter(pk=assignment.pk, pre_task_answers={}).update(
            pre_task_answers=cleaned
        ):
            raise Refused("You have already answered these questions.")
        assignment.pre_task_answers = cleaned
        ack = {"ok": True}
        event_create(
            participant=participant,
            session=None,
            type="pre_task",
            client_event_id=client_event_id,
            sequence=sequence,
            client_time=client_time,
            data={"assignment": assignment.position, "answers": cleaned},
            ack=ack,
        )
        return ack

    _once(participant, client_event_id, write)
    assignment.refresh_from_db(fields=["pre_task_answers"])
    return assignment


def post_task_save(
    *,
    participant: Participant,
    session: SearchSession,
    answers: Mapping[str, Any],
    client_event_id: str,
    sequence: int | None = None,
    client_time=None,
) -> SearchSession:
    """Save the short questionnaire after a finished session (once)."""
    client_id_check(client_event_id)
    participant_check_consented(participant)
    _check_own(participant, session)
    session_expire_if_due(session=session)
    if _stored(participant, client_event_id) is not None:
        return session
    if session.ended_at is None:
        raise Refused("Please finish the search first.")
    if session.post_task_answers:
        raise Refused("You have already answered these questions.")
    if (
        gold_pending(participant=participant, session=session, scenario=session.assignment.scenario)
        is not None
    ):
        raise Refused("Please judge the two documents of this task first.")
    cleaned = answers_clean(questionnaire_items(study=participant.study, post_task=True), answers)

    def write():
        if not SearchSession.objects.filter(pk=session.pk, post_task_answers={}).update(
            post_task_answers=cleaned
        ):
            raise Refused("You have already answered these questions.")
        session.post_task_answers = cleaned
        ack = {"ok": True}
        event_create(
            participant=participant,
            session=session,
            type="post_task",
            client_event_id=client_event_id,
            sequence=sequence,
            client_time=client_time,
            data={"answers": cleaned},
            ack=ack,
        )
        return ack

    _once(participant, client_event_id, write)
    session.refresh_from_db(fields=["post_task_answers"])
    return session


# --- withdrawal -----------------------------------------------------------------------------------------


@transaction.atomic
def participant_withdraw(*, participant: Participant) -> AuditEntry | None:
    """Withdraw: delete the participant's events, judgments (with their history), queries (with the results
    shown) and questionnaire answers; end their sessions as withdrawn. An AuditEntry records that it happened
    and how many rows went, never what they held. Withdrawing twice does nothing the second time."""
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
    session_rows = list(sessions.values_list("pk", "assignment__scenario_id"))
    if session_rows:
        sessions_changed(participant.study_id, [pk for pk, _ in session_rows], [sc for _, sc in session_rows])
    return AuditEntry.objects.create(
        study=participant.study,
        participant_code=participant.code,
        action="participant_withdrawn",
        detail={"deleted": counts},
    )


# --- the browser's event batches ------------------------------------------------------------------------


def too_many_events(events: Sequence) -> str | None:
    """Why a batch body is refused whole for its length (the endpoints answer 413), or None."""
    if len(events) > MAX_BODY_EVENTS:
        return f"a batch holds at most {MAX_BATCH} events (this one has {len(events)})"
    return None


def events_ingest(*, participant: Participant, events: Sequence[Mapping], clock_sample=None) -> list[dict]:
    """Store a batch of client events in order, each once by its client event id; one acknowledgement per
    event (studies/participation/ingest.py says how). clock_sample: the batch's estimate of the client's clock
    offset (participation/clock.py)."""
    return batch_ingest(participant=participant, events=events, capped=True, clock_sample=clock_sample)
