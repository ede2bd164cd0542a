"""The participant's steps by a form, before and between the searches: consent (or its decline), the
questionnaires (before the study, before a task, after a task) and a search session's start. One service per
action (`<entity>_<action>`, keyword-only); each is stored as one Event, once by its client event id, through
THE form step (form_step.py): a re-sent form returns what the first one produced.

The search page's events go through events/ingest.py, a batch at a time (steps.py: the services that are
batches of one).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from django.utils import timezone

from studies.design.lifecycle import participant_check_accepting
from studies.errors import Refused
from studies.kernel.gold import gold_pending
from studies.kernel.steps import StepKind, participant_step
from studies.models import Assignment, Participant, SearchSession
from studies.participation.events.rules import (
    client_id_check,
    participant_check_active,
    participant_check_consented,
    session_clock_start,
    session_expire_if_due,
)
from studies.participation.recruitment.checks import checks_progress
from studies.participation.recruitment.states import participant_clock_start, participant_state_sync
from studies.participation.way.form_step import FormEvent, form_step
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


# --- checks ---------------------------------------------------------------------------------------------


def _check_own(participant: Participant, session: SearchSession) -> None:
    if session.assignment.participant_id != participant.pk:
        raise Refused("This is not one of your search sessions.")


def _no_check() -> None:
    """A form whose checks all come before its stored answer is looked up (who may send it at all)."""


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

    def write(_) -> FormEvent:
        now = timezone.now()
        updated = Participant.objects.filter(pk=participant.pk, consented_at__isnull=True).update(
            consented_at=now, consent_version=study.consent_version
        )
        if updated:
            participant.consented_at, participant.consent_version = now, study.consent_version
        participant_clock_start(participant=participant, now=now)  # the first act: the study clock starts
        ack = {"ok": True, "consent_version": study.consent_version}
        return FormEvent(type="consent", data={"consent_version": consent_version}, ack=ack)

    form_step(
        participant=participant,
        client_event_id=client_event_id,
        sequence=sequence,
        client_time=client_time,
        check=_no_check,
        write=write,
    )
    participant.refresh_from_db(fields=["consented_at", "consent_version"])
    return participant


def consent_decline(
    *, participant: Participant, client_event_id: str, sequence: int | None = None, client_time=None
) -> Participant:
    """The participant declines: nothing else about them is recorded (the Event says only that they
    declined)."""
    client_id_check(client_event_id)

    def check() -> None:
        participant_check_active(participant)
        if participant.consented_at is not None:
            raise Refused("You have already agreed to take part; to stop, withdraw from the study instead.")

    def write(_) -> FormEvent:
        now = timezone.now()
        if Participant.objects.filter(pk=participant.pk, declined_at__isnull=True).update(declined_at=now):
            participant.declined_at = now
        return FormEvent(type="consent_declined", data={}, ack={"ok": True})

    form_step(
        participant=participant,
        client_event_id=client_event_id,
        sequence=sequence,
        client_time=client_time,
        check=check,
        write=write,
    )
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
    if participant.questionnaire_answers:  # answered already (the form sent again, or by another tab)
        return participant

    def check() -> dict:
        participant_check_accepting(participant)
        return answers_clean(questionnaire_items(study=participant.study), answers)

    def write(cleaned: dict) -> FormEvent:
        Participant.objects.filter(pk=participant.pk).update(questionnaire_answers=cleaned)
        participant.questionnaire_answers = cleaned
        return FormEvent(type="questionnaire", data={"answers": cleaned}, ack={"ok": True})

    form_step(
        participant=participant,
        client_event_id=client_event_id,
        sequence=sequence,
        client_time=client_time,
        check=check,
        write=write,
    )
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

    def write(_) -> FormEvent:
        participant_clock_start(participant=participant)  # consented without it (before clocks started)
        # On the session's timeline (docs/time-model.md), with its first clock estimate.
        session = SearchSession.objects.create(
            assignment=assignment,
            **session_clock_start(participant=participant, client_time=client_time, now=timezone.now()),
        )
        ack = {"ok": True, "session": session.pk}
        return FormEvent(
            type="session_start", data={"assignment": assignment.position}, ack=ack, session=session
        )

    ack = form_step(
        participant=participant,
        client_event_id=client_event_id,
        sequence=sequence,
        client_time=client_time,
        check=_no_check,
        write=write,
    )
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

    def check() -> dict:
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
        return answers_clean(questionnaire_items(study=participant.study, pre_task=True), answers)

    def write(cleaned: dict) -> FormEvent:
        if not Assignment.objects.filter(pk=assignment.pk, pre_task_answers={}).update(
            pre_task_answers=cleaned
        ):
            raise Refused("You have already answered these questions.")
        assignment.pre_task_answers = cleaned
        data = {"assignment": assignment.position, "answers": cleaned}
        return FormEvent(type="pre_task", data=data, ack={"ok": True})

    form_step(
        participant=participant,
        client_event_id=client_event_id,
        sequence=sequence,
        client_time=client_time,
        check=check,
        write=write,
    )
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

    def check() -> dict:
        if session.ended_at is None:
            raise Refused("Please finish the search first.")
        if session.post_task_answers:
            raise Refused("You have already answered these questions.")
        scenario = session.assignment.scenario
        if gold_pending(participant=participant, session=session, scenario=scenario) is not None:
            raise Refused("Please judge the two documents of this task first.")
        return answers_clean(questionnaire_items(study=participant.study, post_task=True), answers)

    def write(cleaned: dict) -> FormEvent:
        if not SearchSession.objects.filter(pk=session.pk, post_task_answers={}).update(
            post_task_answers=cleaned
        ):
            raise Refused("You have already answered these questions.")
        session.post_task_answers = cleaned
        return FormEvent(type="post_task", data={"answers": cleaned}, ack={"ok": True}, session=session)

    form_step(
        participant=participant,
        client_event_id=client_event_id,
        sequence=sequence,
        client_time=client_time,
        check=check,
        write=write,
    )
    session.refresh_from_db(fields=["post_task_answers"])
    # The last answer completes the participant now, not at their next page load or a sweep: a completed
    # participant must never read as overdue (nor their row as free).
    participant.refresh_from_db(fields=["state", "state_changed_at", "state_reason"])
    participant_state_sync(participant=participant)
    return session
