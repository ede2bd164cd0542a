"""One body limit on both events endpoints (the participant API took bodies to 2.5 MB and stored 2.6 MB
events), a size cap per event, and a quota on the data a participant's clients store: each refusal says
what and why, and changes nothing."""

import json

import pytest
from django.test import Client
from rest_framework.test import APIClient

from studies.models import Event, Participant
from studies.participation.events.ingest_batch import event_size

from .test_a_client_cannot_send_an_event_type_the_server_writes import api_post, page_post

pytestmark = pytest.mark.django_db
SENDERS = pytest.mark.parametrize("send", [page_post, api_post], ids=["page", "api"])


def _raw_post(participant, via, body: bytes):
    if via == "page":
        return Client().post(f"/p/{participant.access_token}/events/", body, content_type="application/json")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Participant {participant.access_token}")
    return api.post("/api/participant/events/", body, content_type="application/json")


@pytest.mark.parametrize("via", ["page", "api"])
def test_a_body_over_the_limit_is_refused_whole_on_both_endpoints(participant, session, settings, via):
    settings.EVENTS_MAX_BODY_BYTES = 50_000
    event = {"id": "big", "type": "note", "session": session.pk, "data": {"text": "x" * 60_000}}
    response = _raw_post(participant, via, json.dumps({"events": [event]}).encode())
    assert response.status_code == 413
    assert "at most 50000 bytes (EVENTS_MAX_BODY_BYTES)" in json.dumps(response.json())
    assert not Event.objects.filter(participant=participant, client_event_id="big").exists()


def test_the_default_body_limit_is_the_one_megabyte_the_docs_promise(settings):
    assert settings.EVENTS_MAX_BODY_BYTES == 1_000_000


@SENDERS
def test_an_event_over_the_cap_is_refused_alone(participant, session, settings, send):
    settings.EVENTS_MAX_EVENT_BYTES = 2_000
    acks = send(
        participant,
        [
            {"id": "big", "type": "note", "session": session.pk, "data": {"text": "x" * 2_000}},
            {"id": "small", "type": "note", "session": session.pk, "data": {"text": "x" * 1_900}},
        ],
    )
    assert acks[0]["ok"] is False
    assert acks[0]["error"] == ("data: 2011 bytes, over the 2000 an event may hold (EVENTS_MAX_EVENT_BYTES)")
    assert acks[1]["ok"] is True
    assert not Event.objects.filter(participant=participant, client_event_id="big").exists()


@SENDERS
def test_a_full_log_refuses_each_further_event_and_changes_nothing(participant, session, settings, send):
    settings.EVENTS_BYTES_PER_PARTICIPANT = 10_000
    fill = {"id": "fill", "type": "note", "session": session.pk, "data": {"text": "x" * 6_000}}
    [first] = send(participant, [fill])
    assert first["ok"] is True
    participant.refresh_from_db()
    assert participant.event_bytes == event_size({"data": fill["data"]})
    rows, used = Event.objects.count(), participant.event_bytes
    over = {"id": "over", "type": "note", "session": session.pk, "data": {"text": "y" * 5_000}}
    small = {"id": "small", "type": "tab_hidden", "session": session.pk}
    acks = send(participant, [over, small, fill])
    assert acks[0]["ok"] is False
    assert acks[0]["error"].startswith(
        f"this participant's log is full: {used} bytes of event data stored, {event_size(over)} more would"
        " pass the 10000"
    )
    assert acks[1]["ok"] is True  # what still fits is stored
    assert acks[2] == first  # a re-send is answered, never refused for the quota
    assert Event.objects.count() == rows + 1
    assert Participant.objects.get(pk=participant.pk).event_bytes == used + 2


def test_the_counter_adds_up_the_stored_client_data(participant, session):
    events = [
        {"id": f"e{n}", "type": "note", "session": session.pk, "data": {"text": "é" * n}} for n in range(5)
    ]
    page_post(participant, events)
    stored = Event.objects.filter(participant=participant, origin="client")
    expected = sum(len(json.dumps(e.payload["data"], sort_keys=True, separators=(",", ":"))) for e in stored)
    participant.refresh_from_db()
    assert participant.event_bytes == expected > 0
