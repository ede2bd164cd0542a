"""The overdue sweep: close what is overdue in a study whether or not its participants come back. A scheduler
(the beat's task, or cron running manage.py sweep_overdue) runs it for every study and leaves a heartbeat
(SchedulerHeartbeat); without one (the default set-up) it runs where it is needed: every arrival through the
public link times out the overdue before its row is chosen (arrival_sweep), and the whole sweep runs on
participants' requests and the study page at most once per OVERDUE_SWEEP_SECONDS per study
(study_sweep_throttled)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Q
from django.utils import timezone

from studies.kernel.deadlines import TIME_LIMIT_GRACE, deadline_at
from studies.kernel.states import state_of
from studies.models import (
    ENDED_STATES,
    FREEING_STATES,
    Assignment,
    Participant,
    ParticipantState,
    Recruitment,
    SchedulerHeartbeat,
    SearchSession,
    Study,
)
from studies.participation.events.rules import session_expire_if_due
from studies.participation.recruitment.states import (
    participant_sessions_end,
    participant_state_sync,
    participant_time_out_if_due,
    session_done,
    state_derived,
)


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
    result.sessions_ended += freed_sessions_end(study=study, now=now)
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


# At most this many participants are timed out (or sessions of the left ended) by one request's sweep: a
# bounded, indexed query; the next request goes on where it stopped (oldest clock first).
SWEEP_BATCH = 100
# The heartbeat's task name, and how stale it may be (in sweep intervals) before the page says none runs.
HEARTBEAT_TASK = "overdue_sweep"
HEARTBEAT_INTERVALS = 3


def overdue_time_out(*, study: Study, now: datetime | None = None, batch: int = SWEEP_BATCH) -> int:
    """Time out the study's participants past the study-level limit: one indexed query (participant_overdue:
    study, state, started_at), oldest clock first, at most `batch`; each a conditional UPDATE
    (participant_time_out_if_due), so two requests at once never time out one participant twice."""
    now = now or timezone.now()
    recruitment = Recruitment.objects.filter(study=study).first()
    if recruitment is None or not recruitment.time_limit_minutes:
        return 0
    oldest = now - timedelta(minutes=recruitment.time_limit_minutes) - TIME_LIMIT_GRACE
    overdue = (
        Participant.objects.filter(
            Q(state__in=[ParticipantState.INVITED, ParticipantState.STARTED, ParticipantState.ACTIVE])
            | Q(state__isnull=True),
            study=study,
            started_at__lt=oldest,
            preview_at__isnull=True,
        )
        .select_related("study")
        .order_by("started_at", "pk")[:batch]
    )
    return sum(
        participant_time_out_if_due(participant=participant, now=now, recruitment=recruitment)
        for participant in overdue
    )


def freed_sessions_end(*, study: Study, now: datetime | None = None, batch: int = SWEEP_BATCH) -> int:
    """End the open sessions of participants who have left (a row-freeing state: returned, timed out,
    screened out; withdrawal ends its own): "left", or "timed_out" for a time-out here. At most `batch`
    participants."""
    now = now or timezone.now()
    left = (
        SearchSession.objects.filter(
            assignment__participant__study=study,
            assignment__participant__state__in=FREEING_STATES,
            ended_at__isnull=True,
        )
        .values_list("assignment__participant_id", flat=True)
        .order_by("assignment__participant_id")
        .distinct()[:batch]
    )
    ended = 0
    for participant in Participant.objects.filter(pk__in=list(left)).select_related("study"):
        timed_out = participant.state == ParticipantState.TIMED_OUT
        ended += participant_sessions_end(
            participant=participant,
            at=now,
            end_reason=SearchSession.EndReason.TIMED_OUT if timed_out else SearchSession.EndReason.LEFT,
            marker="server-sweep-left",
            data={"reason": "timed_out" if timed_out else "left", "by": "sweep", "state": participant.state},
        )
    return ended


def arrival_sweep(*, study: Study, now: datetime | None = None) -> int:
    """Before an arrival's row is chosen, always: the overdue are timed out, so their rows are freed and go to
    this arrival rather than a fresh row (the balance), whether or not a scheduler runs. Then the whole sweep
    if it is due (study_sweep_throttled). Returns how many were timed out."""
    timed_out = overdue_time_out(study=study, now=now)
    study_sweep_throttled(study=study, now=now)
    return timed_out


def study_sweep_throttled(*, study: Study, now: datetime | None = None) -> SweepResult | None:
    """The whole sweep (study_sweep) at most once per OVERDUE_SWEEP_SECONDS per study: the cache's atomic add
    claims the interval (per process with the default memory cache, shared with CACHE_URL). None when it
    was not due."""
    stamp = study.created_at.timestamp() if study.created_at else 0  # a reused id is another study
    if not cache.add(f"recruitment:sweep:{study.pk}:{stamp}", 1, timeout=settings.OVERDUE_SWEEP_SECONDS):
        return None
    return study_sweep(study=study, now=now)


def scheduler_heartbeat(now: datetime | None = None) -> None:
    """A scheduler ran the sweep (the beat's task, or cron's manage.py sweep_overdue): recorded in the
    database, where every process reads it."""
    SchedulerHeartbeat.objects.update_or_create(
        task=HEARTBEAT_TASK, defaults={"ran_at": now or timezone.now()}
    )


def scheduler_last_run(now: datetime | None = None) -> tuple[datetime | None, bool]:
    """(when a scheduler last ran the sweep, or None; whether that is recent: within HEARTBEAT_INTERVALS
    sweep intervals). Not recent: no scheduler runs, and the sweep runs on arrivals and requests."""
    now = now or timezone.now()
    ran_at = SchedulerHeartbeat.objects.filter(task=HEARTBEAT_TASK).values_list("ran_at", flat=True).first()
    window = timedelta(seconds=settings.OVERDUE_SWEEP_SECONDS * HEARTBEAT_INTERVALS)
    return ran_at, ran_at is not None and now - ran_at <= window


def study_opened_sweep(sender, study: Study, **kwargs) -> None:
    """The study page's sweep (studies.signals.study_opened), unless a scheduler swept recently."""
    if not scheduler_last_run()[1]:
        study_sweep(study=study)


def connect_receivers() -> None:
    from studies.signals import study_opened

    study_opened.connect(study_opened_sweep, dispatch_uid="recruitment.study_opened_sweep")
