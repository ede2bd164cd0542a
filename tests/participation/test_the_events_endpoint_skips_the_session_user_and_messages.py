"""The events endpoint (token in its URL, JSON answers) does without the session, user and messages
middleware (sessionlab/lean_paths.py); its CSRF check and its security headers are those of every page."""

import json

import pytest
from django.core.management import call_command
from django.test import Client

from sessionlab.lean_paths import lean_path_pattern
from studies.models import Query

SECURITY_HEADERS = (
    "Content-Security-Policy",
    "X-Frame-Options",
    "X-Content-Type-Options",
    "Referrer-Policy",
    "Cross-Origin-Opener-Policy",
)


@pytest.fixture
def browser(participant, session):
    client = Client(enforce_csrf_checks=True)
    client.get(f"/p/{participant.access_token}/")  # sets the csrftoken cookie
    return client


def post_batch(browser, participant, session, csrf=True):
    headers = {"X-CSRFToken": browser.cookies["csrftoken"].value} if csrf else {}
    events = [{"id": "a", "seq": 1, "type": "query", "session": session.pk, "data": {"text": "wing"}}]
    return browser.post(
        f"/p/{participant.access_token}/events/",
        json.dumps({"events": events}),
        content_type="application/json",
        headers=headers,
    )


def test_a_batch_is_stored_without_a_session_a_user_or_messages(browser, participant, session):
    response = post_batch(browser, participant, session)
    assert response.status_code == 200 and response.json()["acks"][0]["ok"]
    assert Query.objects.count() == 1
    request = response.wsgi_request
    assert not hasattr(request, "session") and not hasattr(request, "user")
    assert not hasattr(request, "_messages")
    assert "sessionid" not in response.cookies


def test_the_participant_s_pages_keep_their_session_and_user(browser, participant):
    response = browser.get(f"/p/{participant.access_token}/")
    assert response.status_code == 200
    assert hasattr(response.wsgi_request, "session") and hasattr(response.wsgi_request, "user")


def test_the_batch_s_answer_carries_the_security_headers_of_every_page(browser, participant, session):
    page = browser.get(f"/p/{participant.access_token}/")
    response = post_batch(browser, participant, session)
    for header in SECURITY_HEADERS:
        assert response.headers.get(header), header
        assert response.headers[header] == page.headers[header], header


def test_a_batch_without_the_csrf_token_is_still_refused(browser, participant, session):
    response = post_batch(browser, participant, session, csrf=False)
    assert response.status_code == 403
    assert Query.objects.count() == 0
    assert response.headers["X-Frame-Options"] == "DENY"


def test_an_unknown_token_is_a_404_not_a_server_error(db):
    client = Client()
    assert client.post("/p/no-such-token/events/", "{}", content_type="application/json").status_code == 404


@pytest.mark.parametrize(
    ("path", "lean"),
    [
        ("/p/abc123/events/", True),
        ("/p/abc123/events", False),
        ("/p/abc123/events/more/", False),
        ("/p/abc123/", False),
        ("/p/abc123/withdraw/", False),
        ("/p/a/b/events/", False),
        ("/studies/s/p/abc/events/", False),
    ],
)
def test_only_the_events_path_is_lean(path, lean):
    assert bool(lean_path_pattern().fullmatch(path)) is lean


def test_the_system_checks_accept_the_middleware_subclasses(db):
    call_command("check", fail_level="WARNING")
