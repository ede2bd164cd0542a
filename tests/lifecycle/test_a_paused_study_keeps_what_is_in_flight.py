"""Pausing and closing a study (studies/design/lifecycle.py): nobody new starts, nothing in flight is lost."""

import json
import uuid

import pytest

from studies.design import lifecycle, services
from studies.errors import Refused, StudyStatusError
from studies.models import AuditEntry, Event
from studies.participation.way.form_steps import consent_record, questionnaire_save, session_start
from tests.factories import study_enrolled


def cid():
    return uuid.uuid4().hex


@pytest.fixture
def running(designed_study, collection):
    """Two participants: P001 has started its first session, P002 has not opened its link."""
    study_enrolled(designed_study, 2, collection=collection)
    first, second = designed_study.participants.order_by("enrolment_index")
    consent_record(participant=first, consent_version="1", client_event_id=cid())
    questionnaire_save(
        participant=first,
        answers={"search_engine_years": 7, "domain_years": 21, "search_skill": 2},
        client_event_id=cid(),
    )
    session = session_start(
        participant=first, assignment=first.assignments.get(position=1), client_event_id=cid()
    )
    return designed_study, first, second, session


def test_a_paused_study_answers_paused_on_a_link_not_yet_started(client, running, alice):
    study, _first, second, _session = running
    lifecycle.study_status_change(study=study, status="paused", by=alice)
    response = client.get(f"/p/{second.access_token}/")
    assert response.status_code == 200
    assert (
        b"This study is paused" in response.content and b"Nothing you have done is lost" in response.content
    )
    response = client.post(
        f"/p/{second.access_token}/consent/",
        {"decision": "accept", "consent_version": "1", "client_event_id": cid()},
    )
    second.refresh_from_db()
    assert second.consented_at is None


def test_a_paused_study_accepts_the_event_batches_of_a_started_session(client, running, alice):
    study, first, _second, session = running
    lifecycle.study_status_change(study=study, status="paused", by=alice)
    assert b'id="study-paused"' not in client.get(f"/p/{first.access_token}/").content  # the search page
    body = {
        "events": [{"id": "in-flight", "seq": 9, "type": "page_hidden", "session": session.pk, "data": {}}]
    }
    response = client.post(
        f"/p/{first.access_token}/events/", json.dumps(body), content_type="application/json"
    )
    assert response.status_code == 200 and response.json()["acks"][0]["ok"] is True
    assert Event.objects.filter(client_event_id="in-flight", session=session).exists()
    # The next scenario waits: no new session while paused (a request reads the participant afresh).
    first = type(first).objects.select_related("study").get(pk=first.pk)
    with pytest.raises(Refused, match="paused"):
        session_start(participant=first, assignment=first.assignments.get(position=2), client_event_id=cid())


def test_a_paused_study_enrols_nobody_and_opens_again(running, alice):
    study, *_ = running
    lifecycle.study_status_change(study=study, status="paused", by=alice)
    with pytest.raises(StudyStatusError, match="paused"):
        services.participants_enrol(study=study, count=1)
    lifecycle.study_status_change(study=study, status="open", by=alice)
    assert [p.code for p in services.participants_enrol(study=study, count=1)] == ["P003"]


def test_a_closed_study_stays_closed_and_keeps_its_data(client, running, alice):
    study, first, second, session = running
    lifecycle.study_status_change(study=study, status="closed", by=alice)
    with pytest.raises(StudyStatusError, match="stays closed"):
        lifecycle.study_status_change(study=study, status="open", by=alice)
    assert b"This study is closed" in client.get(f"/p/{second.access_token}/").content
    assert Event.objects.filter(session=session).exists()
    assert study.participants.count() == 2


def test_each_change_is_audited_and_a_repeat_does_nothing(running, alice):
    study, *_ = running
    lifecycle.study_status_change(study=study, status="paused", by=alice)
    lifecycle.study_status_change(study=study, status="paused", by=alice)
    lifecycle.study_status_change(study=study, status="closed", by=alice)
    entries = AuditEntry.objects.filter(study=study, action="study_status_changed").order_by("at", "pk")
    assert [(e.detail["from"], e.detail["to"], e.detail["by"]) for e in entries] == [
        ("open", "paused", "alice"),
        ("paused", "closed", "alice"),
    ]


def test_an_unknown_status_is_refused(running, alice):
    with pytest.raises(StudyStatusError, match="not a study status"):
        lifecycle.study_status_change(study=running[0], status="archived", by=alice)


def test_the_public_link_answers_paused(client, running, alice):
    from studies.models import Recruitment

    study, *_ = running
    link = Recruitment.objects.create(study=study, panel="prolific")
    lifecycle.study_status_change(study=study, status="paused", by=alice)
    pid = "a1b2c3d4e5f6a1b2c3d4e5f6"
    response = client.get(f"/join/{link.public_token}/", {"PROLIFIC_PID": pid})
    assert response.status_code == 409 and b"paused" in response.content
    assert not study.participants.filter(panel_id=pid).exists()
    lifecycle.study_status_change(study=study, status="open", by=alice)
    assert client.get(f"/join/{link.public_token}/", {"PROLIFIC_PID": pid}).status_code == 302


def test_the_study_page_shows_the_status_with_counts_and_its_buttons_change_it(client, running, alice, bob):
    study, *_ = running
    client.force_login(bob)
    page = client.get(f"/studies/{study.slug}/").content.decode()
    assert 'id="study-status">Open<' in page and "2 participants enrolled" in page and "1 session" in page
    response = client.post(f"/studies/{study.slug}/status/", {"status": "paused"}, follow=True)
    assert "The study is paused" in response.content.decode()
    study.refresh_from_db()
    assert study.status == "paused"
    response = client.post(f"/studies/{study.slug}/status/", {"status": "closed"})
    response = client.post(f"/studies/{study.slug}/status/", {"status": "open"}, follow=True)
    assert "a closed study stays closed" in response.content.decode()
