"""An optional time limit per scenario: the page's clock ends the session as timed_out, and the server does
so too when the page never reported it."""

from datetime import timedelta

import pytest
from django.utils import timezone

from studies.errors import Refused
from studies.models import Event, SearchSession
from studies.participation.way.steps import query_log, session_end

from .conftest import cid


@pytest.fixture
def timed(participant):
    study = participant.study
    study.time_limit_minutes = 5
    study.save(update_fields=["time_limit_minutes"])
    participant.study.refresh_from_db()
    return participant


def test_the_search_page_carries_the_deadline(client, timed, session):
    page = client.get(f"/p/{timed.access_token}/").content.decode()
    assert '"deadline": "' in page and (session.started_at + timedelta(minutes=5)).isoformat() in page


def test_the_client_ends_the_session_as_timed_out(timed, session):
    session_end(participant=timed, session=session, reason="timed_out", client_event_id=cid())
    session.refresh_from_db()
    assert session.end_reason == "timed_out"


def test_the_server_ends_an_overdue_session_when_the_link_is_reopened(client, timed, session):
    SearchSession.objects.filter(pk=session.pk).update(started_at=timezone.now() - timedelta(minutes=10))
    page = client.get(f"/p/{timed.access_token}/").content.decode()
    assert "How well did this search go?" in page
    session.refresh_from_db()
    assert session.end_reason == "timed_out" and session.ended_at == session.started_at + timedelta(minutes=5)
    logged = Event.objects.get(session=session, type="session_end")
    assert (
        logged.client_event_id == f"server-timeout-{session.pk}" and logged.payload["data"]["by"] == "server"
    )


def test_an_action_after_the_deadline_is_refused(timed, session):
    SearchSession.objects.filter(pk=session.pk).update(started_at=timezone.now() - timedelta(minutes=10))
    session.refresh_from_db()
    with pytest.raises(Refused, match="finished"):
        query_log(participant=timed, session=session, text="wing", client_event_id=cid())


def test_without_a_time_limit_timed_out_is_refused(participant, session):
    with pytest.raises(Refused, match="no time limit"):
        session_end(participant=participant, session=session, reason="timed_out", client_event_id=cid())
