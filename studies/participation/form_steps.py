"""The participant's steps by a form, before and between the searches: consent (or its decline), the
questionnaires (before the study, before a task, after a task) and a search session's start. One service per
action (`<entity>_<action>`, keyword-only); each is stored as one Event, once by its client event id
(`_once`): a re-sent form returns what the first one produced.

The search page's events go through ingest.py, a batch at a time (steps.py: the services that are batches of
one). Every public name here is importable from steps.py too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from studies.design.lifecycle import participant_check_accepting
from studies.errors import Refused
from studies.kernel.gold import gold_pending
from studies.kernel.steps import StepKind, participant_step
from studies.models import Assignment, Participant, SearchSession
from studies.participation.recruitment import (
    checks_progress,
    participant_clock_start,
    participant_state_sync,
)
from studies.participation.rules import (
    client_id_check,
    event_create,
    participant_check_active,
    participant_check_consented,
    server_ack_stored,
    server_event_stored,
    session_clock_start,
    session_expire_if_due,
)
from studies.questionnaires.answers import answers_clean
from studies.questionnaires.items import (
    DEFAULT_POST_TASK_QUESTIONNAIRE,
    DEFAULT_QUESTIONNAIRE,
    questionnaire_errors,
    usable_items,
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
    # A malformed item (stored before the API checked them, or by a path that does not): left out, not a 500.
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


# --- events ---------------------------------------------------------------------------------------------


_stored = server_event_stored  # the server's own row only (a client's holding the id is refused)
_replay = server_ack_stored


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
        participant_clock_start(participant=participant, now=now)  # the first act: the study clock starts
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
    """The participant declines: nothing else about them is recorded (the Event says only that they
    declined)."""
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
    if step.kind == StepKind.PRE_TASK and step.assignment is not None and step.assignment.pk == assignment.pk:
        raise Refused("Please answer the questions before this task first.")
    if step.kind != StepKind.SCENARIO or step.assignment is None or step.assignment.pk != assignment.pk:
        raise Refused("Please work the scenarios in the order given.")

    def write():
        participant_clock_start(participant=participant)  # consented without it (before clocks started)
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


# --- the questions before and after a task ------------------------------------------------------------


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
    # The study's checks come before the first task, as for its start.
    if checks_progress(participant).pending:
        raise Refused("Please answer the questions before the tasks first.")
    step = participant_step(participant=participant)
    if step.kind != StepKind.PRE_TASK or step.assignment is None or step.assignment.pk != assignment.pk:
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
    # The last answer completes the participant now, not at their next page load or a sweep: a completed
    # participant must never read as overdue (nor their row as free).
    participant.refresh_from_db(fields=["state", "state_changed_at", "state_reason"])
    participant_state_sync(participant=participant)
    return session
