"""Participant states: each change is one conditional UPDATE (two requests cannot both make it) and one
AuditEntry. Three states are derived from the participant's rows and move on by themselves
(invited -> started -> active); five are where they end (studies.models.ENDED_STATES)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from studies.errors import RecruitmentError
from studies.kernel.deadlines import TIME_LIMIT_GRACE, deadline_at
from studies.kernel.states import state_of
from studies.models import (
    ENDED_STATES,
    FREEING_STATES,
    Assignment,
    AuditAction,
    AuditEntry,
    Participant,
    ParticipantState,
    Recruitment,
    SearchSession,
)
from studies.participation.events.rules import ENDED_WITHOUT_DATA, event_create, sessions_changed
from studies.participation.recruitment.effort import effort_shortfall, shortfall_text

# Today's names of the states (the enumeration is studies.models.ParticipantState).
INVITED, STARTED, ACTIVE, COMPLETED = (
    ParticipantState.INVITED,
    ParticipantState.STARTED,
    ParticipantState.ACTIVE,
    ParticipantState.COMPLETED,
)
RETURNED, TIMED_OUT, SCREENED_OUT, WITHDRAWN = (
    ParticipantState.RETURNED,
    ParticipantState.TIMED_OUT,
    ParticipantState.SCREENED_OUT,
    ParticipantState.WITHDRAWN,
)
# States a participant ends in; and those of them that free the plan row for the next arrival.
ENDED = ENDED_STATES
FREEING = FREEING_STATES
# What a participant who ended that way reads if they open their link again (rules refuses their actions).
ENDED_MESSAGES = ENDED_WITHOUT_DATA


def participant_state_set(
    *,
    participant: Participant,
    state: str,
    reason: str = "",
    now: datetime | None = None,
    detail: Mapping | None = None,
) -> bool:
    """Move `participant` to `state` if they are still in the state this instance holds (a conditional
    UPDATE); an ended participant only moves to withdrawn. Returns whether it moved; records an AuditEntry."""
    current = state_of(participant)
    if state == current or (current in ENDED_STATES and state != ParticipantState.WITHDRAWN):
        return False
    now = now or timezone.now()
    held = (
        Q(state__isnull=True) | Q(state=ParticipantState.INVITED)
        if current == ParticipantState.INVITED
        else Q(state=current)
    )
    moved = Participant.objects.filter(held, pk=participant.pk).update(
        state=state, state_changed_at=now, state_reason=reason[:300] or None
    )
    if moved:
        participant.state, participant.state_changed_at, participant.state_reason = (
            state,
            now,
            reason[:300] or None,
        )
        AuditEntry.objects.create(
            study_id=participant.study_id,
            participant_code=participant.code,
            action=AuditAction.PARTICIPANT_STATE,
            detail={"from": current, "to": state, "reason": reason, **(detail or {})},
        )
    return bool(moved)


def state_derived(
    *, participant: Participant, sessions: Iterable[tuple[bool, bool]], assignments: int
) -> str:
    """The state a participant's rows say, before the ending states only events set (returned, timed out,
    screened out). `sessions`: (ended, answered or withdrawn) per session held."""
    if participant.withdrawn_at is not None or participant.declined_at is not None:
        return ParticipantState.WITHDRAWN
    sessions = list(sessions)
    if (
        assignments
        and len(sessions) == assignments
        and all(ended and answered for ended, answered in sessions)
    ):
        return ParticipantState.COMPLETED
    if sessions:
        return ParticipantState.ACTIVE
    if participant.started_at is not None or participant.consented_at is not None:
        return ParticipantState.STARTED
    return ParticipantState.INVITED


def participant_state_sync(
    *,
    participant: Participant,
    sessions: Iterable[tuple[bool, bool]] | None = None,
    assignments: int | None = None,
) -> str:
    """Bring the stored state up to what the participant's rows say; returns the state."""
    if sessions is None or assignments is None:
        rows = list(
            Assignment.objects.filter(participant=participant, retake_of__isnull=True).values_list(
                "session__id", "session__ended_at", "session__end_reason", "session__post_task_answers"
            )
        )
        assignments = len(rows)
        sessions = [session_done(*row[1:]) for row in rows if row[0] is not None]
    derived = state_derived(participant=participant, sessions=sessions, assignments=assignments)
    if derived == ParticipantState.COMPLETED and state_of(participant) not in ENDED_STATES:
        participant_complete(participant=participant)
    elif derived != state_of(participant):
        reason = (
            "declined consent"
            if derived == ParticipantState.WITHDRAWN and participant.withdrawn_at is None
            else ""
        )
        participant_state_set(participant=participant, state=derived, reason=reason)
    return state_of(participant)


def participant_complete(*, participant: Participant) -> bool:
    """A participant whose rows say completed: below the study's minimum-effort rules they are screened out
    with the failed-checks code (outcome "failed"), or completed with the shortfall as their state's reason
    (outcome "flagged"); otherwise completed. Returns whether the state moved."""
    recruitment = Recruitment.objects.filter(study_id=participant.study_id).first()
    short = effort_shortfall(participant, recruitment)
    if short and recruitment is not None and recruitment.effort_outcome == "failed":
        return participant_screen_out(
            participant=participant, failed_checks=True, reason=shortfall_text(short)
        )
    return participant_state_set(
        participant=participant,
        state=ParticipantState.COMPLETED,
        reason=shortfall_text(short) if short else "",
        detail={"effort_flags": [flag.text() for flag in short]} if short else None,
    )


def session_done(ended_at, end_reason, post_task_answers) -> tuple[bool, bool]:
    """(ended, answered or withdrawn) for one session's columns: what state_derived reads (the sweep too)."""
    return ended_at is not None, bool(post_task_answers) or end_reason == SearchSession.EndReason.WITHDRAWN


def participant_visit(*, participant: Participant, now: datetime | None = None) -> str:
    """A participant's link was opened (a GET: perhaps a mail scanner or a link checker, not the person): an
    overdue participant is timed out and the state follows their rows, but the study clock does not start
    (participant_clock_start does, when they act). Returns the state."""
    now = now or timezone.now()
    if state_of(participant) not in ENDED_STATES:
        participant_time_out_if_due(participant=participant, now=now)
    if state_of(participant) not in ENDED_STATES or (participant.withdrawn_at is not None):
        participant_state_sync(participant=participant)
    return state_of(participant)


def participant_clock_start(*, participant: Participant, now: datetime | None = None) -> None:
    """The participant acted (consent, a session's start): the study clock starts now unless it already
    runs (a public-link arrival starts it on arrival), and their state follows (invited -> started)."""
    if participant.started_at is not None:
        return
    now = now or timezone.now()
    if Participant.objects.filter(pk=participant.pk, started_at__isnull=True).update(started_at=now):
        participant.started_at = now
    else:
        participant.refresh_from_db(fields=["started_at"])
    participant_state_sync(participant=participant)


def participant_deadline(participant: Participant, recruitment: Recruitment | None) -> datetime | None:
    """When the study-level limit times the participant out: THE deadline rule (rules.deadline_at) from the
    first visit; None without a limit or a visit."""
    if recruitment is None or participant.started_at is None:
        return None
    return deadline_at(participant.started_at, recruitment.time_limit_minutes)


def participant_time_out_if_due(
    *, participant: Participant, now: datetime | None = None, recruitment: Recruitment | None = None
) -> bool:
    """Time out a participant past the study-level limit (plus the client's grace): their open session ends
    as timed out at the deadline, their state becomes timed_out and their row is freed. True when it did."""
    if recruitment is None:
        recruitment = Recruitment.objects.filter(study_id=participant.study_id).first()
    deadline = participant_deadline(participant, recruitment)
    now = now or timezone.now()
    if (
        recruitment is None
        or deadline is None
        or now < deadline + TIME_LIMIT_GRACE
        or state_of(participant) in ENDED_STATES
    ):
        return False
    # Their rows first: one who completed (or withdrew) before the limit is not timed out after it.
    if participant_state_sync(participant=participant) in ENDED_STATES:
        return False
    with transaction.atomic():
        if not participant_state_set(
            participant=participant,
            state=ParticipantState.TIMED_OUT,
            now=now,
            reason=f"study time limit of {recruitment.time_limit_minutes} minutes",
        ):
            return False
        participant_sessions_end(
            participant=participant,
            at=deadline,
            end_reason=SearchSession.EndReason.TIMED_OUT,
            marker="server-study-timeout",
            data={"reason": "timed_out", "by": "server", "limit": "study"},
        )
    return True


def participant_sessions_end(
    *,
    participant: Participant,
    at: datetime,
    end_reason: str = SearchSession.EndReason.LEFT,
    marker: str = "server-left",
    data: Mapping | None = None,
) -> int:
    """End the participant's open sessions at `at` (not before each one's start) with `end_reason`, each
    with a server session_end event (`marker`-<session id>, once: a conditional UPDATE) that says why, and
    announce them (scored as every finished session). Returns how many it ended. For a participant who left:
    timed out here, or returned, timed out or rejected on the panel (with end reason "left")."""
    open_sessions = list(
        SearchSession.objects.filter(assignment__participant=participant, ended_at__isnull=True).values_list(
            "pk", "started_at", "assignment__scenario_id"
        )
    )
    ended = []
    for pk, started_at, scenario in open_sessions:
        if SearchSession.objects.filter(pk=pk, ended_at__isnull=True).update(
            ended_at=max(at, started_at), end_reason=end_reason
        ):
            ended.append((pk, scenario))
            event_create(
                participant=participant,
                session=SearchSession(pk=pk),
                type="session_end",
                client_event_id=f"{marker}-{pk}",
                sequence=None,
                client_time=None,
                data=dict(data or {"reason": end_reason, "by": "server"}),
                ack={"ok": True, "reason": end_reason},
            )
    if ended:
        sessions_changed(participant.study_id, [pk for pk, _ in ended], [scenario for _, scenario in ended])
    return len(ended)


def participant_screen_out(*, participant: Participant, reason: str, failed_checks: bool = False) -> bool:
    """A participant the study's checks screen out (their row is freed); `failed_checks` gives them the
    failed-checks code instead of the screened-out one."""
    if not reason.strip():
        raise RecruitmentError("a screen-out needs a reason")
    return participant_state_set(
        participant=participant,
        state=ParticipantState.SCREENED_OUT,
        reason=("failed checks: " if failed_checks else "") + reason.strip(),
    )
