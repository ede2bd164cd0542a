"""The rules every participant's action obeys, in one place (the way's services, ../way/, and the event batch,
ingest.py, both apply them): the limits of a batch, the one session deadline and its expiry, the checks on a
participant, how an event of a form or of the server is written (a form's once by its id: way/form_step.py),
and what a finished session announces.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from sessionlab.queueing import delay_on_commit, task_named
from studies.errors import InvalidEvent, Refused
from studies.kernel.deadlines import TIME_LIMIT_GRACE, deadline_at  # THE rule, kept importable here
from studies.models import Event, EventOrigin, Participant, ParticipantState, SearchSession
from studies.participation.events.clock import offset_delta
from studies.participation.events.event_checks import CLIENT_ID, MAX_SEQUENCE, client_time_checked
from studies.signals import sessions_finished

END_REASONS = (
    SearchSession.EndReason.SATISFIED,
    SearchSession.EndReason.GAVE_UP,
    SearchSession.EndReason.TIMED_OUT,
)
MAX_PAGE = 100
MAX_BATCH = 200
# A body with more events than this is refused whole (413): past MAX_BATCH each event gets its own "retry
# later", and a megabyte of "{}" would otherwise be answered with some 30 MB of them.
MAX_BODY_EVENTS = 5 * MAX_BATCH


# Endings after which nothing more is recorded (studies/participation/recruitment/ sets them): a participant
# the panel says returned, the study-level limit timed out, or a check screened out.
ENDED_WITHOUT_DATA: dict[str, str] = {  # keyed by ParticipantState (a str)
    ParticipantState.RETURNED: "You returned this study on the panel; nothing more is recorded.",
    ParticipantState.TIMED_OUT: (
        "The time for this study has run out; nothing more is recorded. Thank you for your time."
    ),
    ParticipantState.SCREENED_OUT: "Thank you: this study is not for you, so it ends here.",
}


def client_id_check(client_event_id) -> str:
    if not isinstance(client_event_id, str) or not CLIENT_ID.match(client_event_id):
        raise InvalidEvent("a client event id is 1..64 letters, digits or _.:-")
    return client_event_id


def event_create(*, participant, session, type, client_event_id, sequence, client_time, data, ack) -> Event:
    """One Event of a form (or the server): a sequence the column cannot hold is left out, a client time goes
    through the one rule (event_checks.client_time_checked) as the events endpoints' do."""
    now = timezone.now()
    moment, time_text, _ = client_time_checked(
        client_time, received_at=now, window=timedelta(seconds=settings.CLIENT_TIME_WINDOW_SECONDS)
    )
    if time_text is not None:
        data = {**data, "client_time_raw": time_text}
    return Event.objects.create(
        participant=participant,
        session=session,
        type=type,
        client_event_id=client_event_id,
        sequence=sequence
        if isinstance(sequence, int) and not isinstance(sequence, bool) and 0 <= sequence <= MAX_SEQUENCE
        else None,
        client_time=moment,
        payload={"data": data, "ack": ack},
        origin=EventOrigin.SERVER,  # every caller is the server's: a form's step, a check, a time-out
    )


def session_clock_start(*, participant: Participant, client_time, now: datetime) -> dict:
    """A new session's start on its timeline, and its first estimate of the client's clock offset
    (docs/time-model.md): the participant's latest session's (the same clock), else the start form's one-way
    sample (its client time against its receive time), else none. Returns SearchSession's fields."""
    moment, _, _ = client_time_checked(
        client_time, received_at=now, window=timedelta(seconds=settings.CLIENT_TIME_WINDOW_SECONDS)
    )
    latest = (
        SearchSession.objects.filter(assignment__participant=participant, clock_offset_ms__isnull=False)
        .order_by("-pk")
        .values_list("clock_offset_ms", "clock_delay_ms")
        .first()
    )
    if latest is not None:
        offset_ms, delay_ms = latest
    elif moment is not None:
        offset_ms, delay_ms = (now - moment) / timedelta(milliseconds=1), None
    else:
        offset_ms = delay_ms = None
    started_at = now if moment is None else moment + offset_delta(offset_ms)
    return {"started_at": started_at, "clock_offset_ms": offset_ms, "clock_delay_ms": delay_ms}


def participant_check_active(participant: Participant) -> None:
    if participant.withdrawn_at is not None:
        raise Refused("You have withdrawn from this study; nothing more is recorded.")
    if participant.declined_at is not None:
        raise Refused("You declined to take part; nothing is recorded.")
    if participant.state in ENDED_WITHOUT_DATA:
        raise Refused(ENDED_WITHOUT_DATA[participant.state])


def participant_check_consented(participant: Participant) -> None:
    participant_check_active(participant)
    if participant.consented_at is None:
        raise Refused("Please read and accept the consent form first.")


def sessions_changed(study_id: int, session_ids: list[int], scenario_ids: list[int]) -> None:
    """Finished or withdrawn sessions change the study's scores and may grow its assessment pools: announce
    them (scoring marks its default run stale) and queue the pools' growth on commit, so the participant's
    request never waits for either. The event batch (studies/participation/events/ingest.py) calls it too."""
    # Scoring listens (scoring/receivers.py): studies announces, never imports the scoring app.
    sessions_finished.send(sender=SearchSession, study_id=study_id, session_ids=session_ids)
    for scenario_id in set(scenario_ids):
        # A broker that is down does not fail the participant's request (requeue_stale_runs grows them later).
        delay_on_commit(task_named("studies.tasks.assessment_pools_grow_task"), study_id, scenario_id)


def session_deadline(session: SearchSession) -> datetime | None:
    minutes = session.assignment.participant.study.time_limit_minutes
    return deadline_at(session.started_at, minutes)


def session_expire_if_due(*, session: SearchSession, now: datetime | None = None) -> bool:
    """End an open session whose time limit (plus a grace for the client's own timer) has passed, as
    timed_out. Returns True when it ended it. Conditional UPDATE: two requests cannot both end it."""
    deadline = session_deadline(session)
    now = now or timezone.now()
    if session.ended_at is not None or deadline is None or now < deadline + TIME_LIMIT_GRACE:
        return False
    with transaction.atomic():
        ended = SearchSession.objects.filter(pk=session.pk, ended_at__isnull=True).update(
            ended_at=deadline, end_reason=SearchSession.EndReason.TIMED_OUT
        )
        if ended:
            session.ended_at, session.end_reason = deadline, SearchSession.EndReason.TIMED_OUT
            # The raw log says so too; the page never reported it, so the id is the server's.
            participant = session.assignment.participant
            event_create(
                participant=participant,
                session=session,
                type="session_end",
                client_event_id=f"server-timeout-{session.pk}",
                sequence=None,
                client_time=None,
                data={"reason": "timed_out", "by": "server"},
                ack={"ok": True, "reason": "timed_out"},
            )
            sessions_changed(participant.study_id, [session.pk], [session.assignment.scenario_id])
    return bool(ended)
