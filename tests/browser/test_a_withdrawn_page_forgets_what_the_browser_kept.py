"""The withdrawn page said "4 actions could not be saved" under "your data have been deleted": the
outbox of the withdrawn participant still tried to send what it held. Now the page deletes what this browser
kept of them (the outbox, its sequence), sends nothing, and shows no notice."""

import pytest

from studies.models import Event, Participant
from studies.participation.way.form_steps import consent_record
from studies.participation.way.steps import participant_withdraw

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_withdrawn_page_sends_nothing_and_says_nothing_of_unsaved_actions(chromium, live_server, token):
    participant = Participant.objects.get(access_token=token)
    consent_record(participant=participant, consent_version="1", client_event_id="c1")
    page = chromium.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/p/{token}/")
    page.wait_for_selector("body[data-participant-script=ready]")
    prefix = f"sessionlab:{token}:"
    waiting = [
        {"id": f"e{n}", "seq": n, "type": "query", "session": 1, "data": {"text": "x"}} for n in range(4)
    ]
    page.evaluate(
        "([key, events]) => localStorage.setItem(key, JSON.stringify(events))", [prefix + "outbox", waiting]
    )
    participant_withdraw(participant=participant)
    sent = []
    page.on("request", lambda request: "/events/" in request.url and sent.append(request.url))
    page.goto(f"{live_server.url}/p/{token}/")
    page.wait_for_selector("body[data-participant-script=ready]")
    page.wait_for_timeout(1500)
    assert "You have withdrawn" in page.inner_text("main")
    assert page.inner_text("#outbox-status") == "" and sent == []
    kept = page.evaluate("(p) => Object.keys(localStorage).filter((k) => k.startsWith(p))", prefix)
    assert kept == []
    assert not Event.objects.filter(participant=participant).exists()
    page.close()
