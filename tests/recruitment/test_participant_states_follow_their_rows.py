"""A participant's state: invited until the link is opened, started, active from the first scenario,
completed at the end; withdrawn (or having declined) beats everything; returned, timed out and screened out
are endings only an event sets. Every change is audited."""

from datetime import timedelta

import pytest
from django.utils import timezone

from studies.errors import RecruitmentError, Refused
from studies.kernel.states import state_of
from studies.models import AuditEntry, Participant, SearchSession
from studies.participation.recruitment.states import (
    participant_screen_out,
    participant_state_set,
    participant_state_sync,
)
from studies.participation.way.form_steps import consent_decline, consent_record
from studies.participation.way.steps import participant_withdraw, query_log

from .conftest import cid, finish, ready, start

pytestmark = pytest.mark.django_db


def state(participant):
    return state_of(Participant.objects.get(pk=participant.pk))


def test_an_enrolled_participant_is_invited_until_they_consent(client, participant):
    assert state(participant) == "invited"
    client.get(f"/p/{participant.access_token}/")
    assert state(participant) == "invited"
    consent_record(
        participant=participant, consent_version=participant.study.consent_version, client_event_id=cid()
    )
    participant.refresh_from_db()
    assert participant.started_at is not None and state(participant) == "started"


def test_the_first_scenario_makes_them_active_and_the_last_answer_completed(client, participant):
    client.get(f"/p/{participant.access_token}/")
    start(participant)
    client.get(f"/p/{participant.access_token}/")
    assert state(participant) == "active"
    finish(participant)
    client.get(f"/p/{participant.access_token}/")
    assert state(participant) == "completed"
    moves = [
        entry.detail["to"]
        for entry in AuditEntry.objects.filter(action="participant_state").order_by("at", "pk")
    ]
    assert moves == ["started", "active", "completed"]


def test_withdrawing_after_completing_makes_them_withdrawn(client, participant):
    finish(participant)
    client.get(f"/p/{participant.access_token}/")
    participant_withdraw(participant=participant)
    client.get(f"/p/{participant.access_token}/")
    assert state(participant) == "withdrawn"


def test_declining_consent_is_withdrawn_with_its_reason(client, participant):
    consent_decline(participant=participant, client_event_id=cid())
    client.get(f"/p/{participant.access_token}/")
    participant.refresh_from_db()
    assert participant.state == "withdrawn" and participant.state_reason == "declined consent"


def test_an_ending_is_not_undone_by_the_rows(participant):
    ready(participant)
    assert participant_screen_out(
        participant=participant, reason="comprehension check failed twice", failed_checks=True
    )
    finish_attempt = participant_state_sync(participant=Participant.objects.get(pk=participant.pk))
    assert finish_attempt == "screened_out"


def test_a_screen_out_needs_a_reason(participant):
    with pytest.raises(RecruitmentError):
        participant_screen_out(participant=participant, reason="  ")


def test_a_state_moves_once_when_two_requests_race(participant):
    first, second = Participant.objects.get(pk=participant.pk), Participant.objects.get(pk=participant.pk)
    assert participant_state_set(participant=first, state="returned", reason="panel")
    assert not participant_state_set(participant=second, state="timed_out", reason="sweep")
    assert state(participant) == "returned"
    assert AuditEntry.objects.filter(action="participant_state").count() == 1


def test_a_screened_out_participant_cannot_act_any_more(client, participant):
    session = start(participant)
    participant_screen_out(participant=participant, reason="attention check")
    fresh = Participant.objects.get(pk=participant.pk)
    with pytest.raises(Refused, match="not for you"):
        query_log(participant=fresh, session=session, text="wing", client_event_id=cid())
    page = client.get(f"/p/{participant.access_token}/")
    assert page.status_code == 200 and "not for you" in page.content.decode()


def test_the_study_time_limit_times_a_participant_out_on_their_next_visit(client, panel_study):
    participant = panel_study.participants.order_by("enrolment_index")[0]
    session = start(participant)
    Participant.objects.filter(pk=participant.pk).update(started_at=timezone.now() - timedelta(minutes=61))
    SearchSession.objects.filter(pk=session.pk).update(started_at=timezone.now() - timedelta(minutes=59))
    page = client.get(f"/p/{participant.access_token}/").content.decode()
    assert "time for this study has run out" in page
    participant.refresh_from_db()
    assert participant.state == "timed_out"
    session = participant.assignments.get(position=1).session
    assert session.end_reason == "timed_out"
    assert session.ended_at == participant.started_at + timedelta(minutes=60)
