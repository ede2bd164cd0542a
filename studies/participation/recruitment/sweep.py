"""The overdue sweep: close what is overdue in a study whether or not its participants come back (the beat
task for every study; the study page on each load, in eager mode, through studies.signals.study_opened)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from studies.models import (
    ENDED_STATES,
    FREEING_STATES,
    Assignment,
    Participant,
    ParticipantState,
    Recruitment,
    SearchSession,
    Study,
)
from studies.participation.recruitment.states import (
    participant_state_sync,
    participant_time_out_if_due,
    session_done,
    state_derived,
    state_of,
)
from studies.participation.rules import TIME_LIMIT_GRACE, deadline_at, session_expire_if_due


@dataclass
class SweepResult:
    sessions_ended: int = 0
    timed_out: int = 0
    states_changed: int = 0


def study_sweep(*, study: Study, now: datetime | None = None) -> SweepResult:
    """Close what is overdue in one study, whether or not its participants come back: sessions past the
    per-scenario limit (rules.session_expire_if_due), participants past the study-level one, and every
    state that its rows have moved on. Idempotent; the beat task runs it for every study, the study page
    on each load."""
    now = now or timezone.now()
    result = SweepResult()
    if study.time_limit_minutes:
        oldest = now - TIME_LIMIT_GRACE
        overdue = (
            SearchSession.objects.select_related("assignment__participant__study")
            .filter(assignment__participant__study=study, ended_at__isnull=True, started_at__lt=oldest)
            .order_by("pk")
        )
        for session in overdue:
            result.sessions_ended += session_expire_if_due(session=session, now=now)
    # One query for every participant who may still move (the study page runs this on each load): their
    # columns, their sessions' ends and the study-level limit; a Participant is fetched only to change it.
    rows = (
        Assignment.objects.filter(participant__study=study, retake_of__isnull=True)
        .exclude(participant__state__in=FREEING_STATES)
        .values_list(
            "participant_id",
            "participant__state",
            "participant__started_at",
            "participant__consented_at",
            "participant__withdrawn_at",
            "participant__declined_at",
            "participant__study__recruitment__time_limit_minutes",
            "session__id",
            "session__ended_at",
            "session__end_reason",
            "session__post_task_answers",
        )
    )
    columns: dict[int, list[Any]] = {}
    counts: defaultdict[int, int] = defaultdict(int)
    sessions: defaultdict[int, list[tuple[bool, bool]]] = defaultdict(list)
    for participant_id, *fields, session_id, ended_at, end_reason, answers in rows:
        columns[participant_id] = fields
        counts[participant_id] += 1
        if session_id is not None:
            sessions[participant_id].append(session_done(ended_at, end_reason, answers))
    recruitment = None
    for participant_id, (
        state,
        started_at,
        consented_at,
        withdrawn_at,
        declined_at,
        limit,
    ) in columns.items():
        before = state or ParticipantState.INVITED
        deadline = deadline_at(started_at, limit) if started_at and limit else None
        if before not in ENDED_STATES and deadline is not None and now >= deadline + TIME_LIMIT_GRACE:
            recruitment = recruitment or Recruitment.objects.get(study=study)
            participant = Participant.objects.get(pk=participant_id)
            result.timed_out += participant_time_out_if_due(
                participant=participant, now=now, recruitment=recruitment
            )
            continue
        light = Participant(
            started_at=started_at,
            consented_at=consented_at,
            withdrawn_at=withdrawn_at,
            declined_at=declined_at,
        )
        derived = state_derived(
            participant=light, sessions=sessions[participant_id], assignments=counts[participant_id]
        )
        if derived != before and (before not in ENDED_STATES or derived == ParticipantState.WITHDRAWN):
            participant = Participant.objects.get(pk=participant_id)
            participant_state_sync(
                participant=participant, sessions=sessions[participant_id], assignments=counts[participant_id]
            )
            result.states_changed += state_of(participant) != before
    return result


def study_opened_sweep(sender, study: Study, **kwargs) -> None:
    """The study page's sweep (studies.signals.study_opened): in eager mode, where no beat runs the task."""
    from django.conf import settings

    if settings.CELERY_TASK_ALWAYS_EAGER:
        study_sweep(study=study)


def connect_receivers() -> None:
    from studies.signals import study_opened

    study_opened.connect(study_opened_sweep, dispatch_uid="recruitment.study_opened_sweep")
