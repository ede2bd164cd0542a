"""The events endpoint: JSON batches with the CSRF header (fetch) or a form field (sendBeacon)."""

import json

import pytest
from django.test import Client

from studies.models import Event, Query


@pytest.fixture
def browser(participant, session):
    client = Client(enforce_csrf_checks=True)
    client.get(f"/p/{participant.access_token}/")  # sets the csrftoken cookie
    return client


def batch(session, *ids):
    return {
        "events": [
            {"id": i, "seq": n, "type": "query", "session": session.pk, "data": {"text": "wing"}}
            for n, i in enumerate(ids, start=1)
        ]
    }


def test_a_json_batch_with_the_csrf_header_is_acknowledged(browser, participant, session):
    token = browser.cookies["csrftoken"].value
    response = browser.post(
        f"/p/{participant.access_token}/events/",
        json.dumps(batch(session, "a", "b")),
        content_type="application/json",
        headers={"X-CSRFToken": token},
    )
    assert response.status_code == 200
    acks = response.json()["acks"]
    assert [a["id"] for a in acks] == ["a", "b"] and all(a["ok"] for a in acks)
    assert [a["query"] for a in acks] == [1, 2] and len(acks[0]["results"]) == 10
    assert Query.objects.count() == 2


def test_a_batch_without_the_csrf_token_is_rejected(browser, participant, session):
    response = browser.post(
        f"/p/{participant.access_token}/events/",
        json.dumps(batch(session, "a")),
        content_type="application/json",
    )
    assert response.status_code == 403
    assert not Event.objects.filter(client_event_id="a").exists()


def test_a_beacon_form_batch_is_stored_once_even_if_sent_again(browser, participant, session):
    token = browser.cookies["csrftoken"].value
    form = {"csrfmiddlewaretoken": token, "batch": json.dumps(batch(session, "a"))}
    for _ in range(2):
        assert browser.post(f"/p/{participant.access_token}/events/", form).status_code == 200
    assert Event.objects.filter(client_event_id="a").count() == 1 and Query.objects.count() == 1


def test_a_body_that_is_not_a_batch_is_a_400(client, participant, session):
    url = f"/p/{participant.access_token}/events/"
    assert client.post(url, "nope", content_type="application/json").status_code == 400
    assert client.post(url, json.dumps({"events": 3}), content_type="application/json").status_code == 400
