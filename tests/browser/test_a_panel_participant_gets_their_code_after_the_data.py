"""The panel participant's whole way in a browser: the public link with a Prolific id, consent, the
scenarios, the completion code and the redirect to Prolific, with the network cut just before the end: the
code stays hidden and the redirect waits until the server confirms every event is stored."""

import pytest

from studies.models import Event, Participant, Recruitment

from .steps import end_task, post_task, ready

pytestmark = pytest.mark.django_db(transaction=True)

PID = "5f0c" + "ab" * 10


def test_a_prolific_participant_is_sent_back_only_after_their_data_are_stored(chromium, live_server, token):
    study = Participant.objects.get(access_token=token).study
    found = Recruitment.objects.create(study=study, panel="prolific")
    page = chromium.new_page()
    page.set_default_timeout(15_000)
    # Prolific's page, answered here (no network leaves the test).
    page.route(
        "https://app.prolific.com/**",
        lambda route: route.fulfill(
            status=200, content_type="text/html", body="<title>Prolific</title><p>Submission complete</p>"
        ),
    )

    page.goto(f"{live_server.url}/join/{found.public_token}/?PROLIFIC_PID={PID}&STUDY_ID=st1&SESSION_ID=se1")
    page.wait_for_selector(ready("#consent-accept"))
    participant = Participant.objects.get(study=study, panel_id=PID)
    assert f"/p/{participant.access_token}/" in page.url
    page.click("#consent-accept")
    page.wait_for_selector(ready("form#questionnaire"))
    page.fill("input[name=search_engine_years]", "7")
    page.fill("input[name=domain_years]", "21")
    page.check("input[name=search_skill][value='3']")
    page.click("form#questionnaire button")

    for went_well, last in ((4, False), (2, True)):
        page.click(ready("#start-search"))
        page.wait_for_selector(ready("#search-app"))
        page.fill("#query", "wing")
        page.press("#query", "Enter")
        page.wait_for_selector(".result")
        page.click(".result:nth-child(1) .result-title")
        page.wait_for_function("() => document.getElementById('document-text').textContent.length > 20")
        page.keyboard.press("2")
        page.wait_for_function(
            "() => document.getElementById('judgment-status').textContent.includes('relevant')"
        )
        page.keyboard.press("Escape")
        end_task(page, "satisfied")
        if last:
            # The network cut, just before the end: the events and the confirmation do not get through.
            page.route("**/events/", lambda route: route.abort())
            page.route("**/completion/", lambda route: route.abort())
        post_task(page, went_well)

    page.wait_for_selector("#completion")
    page.wait_for_timeout(3000)
    assert "/p/" in page.url, "no redirect before the server confirmed"
    assert page.is_hidden("#completion-ready") and page.text_content("#completion-code") == ""

    page.unroute("**/events/")
    page.unroute("**/completion/")
    page.wait_for_url("https://app.prolific.com/**", timeout=20_000)
    assert page.url == f"https://app.prolific.com/submissions/complete?cc={found.code_completed}"

    participant.refresh_from_db()
    assert participant.state == "completed"
    generated = Event.objects.filter(participant=participant).exclude(sequence=None)
    sequences = sorted(generated.values_list("sequence", flat=True))
    assert sequences == list(range(1, len(sequences) + 1)) and len(sequences) >= 10
    page.close()
