"""An MTurk worker's whole way in a browser: the public link with MTurk's ids and turkSubmitTo (the sandbox),
consent, the scenarios, and the HIT submitted by a form posted to the sandbox's externalSubmit, with the
network cut just before the end: no form exists until the server confirms every event is stored, and the
page's Content-Security-Policy lets that form (and nothing else) go to MTurk."""

from urllib.parse import parse_qs

import pytest

from studies.models import Participant, Recruitment

from .csp import csp_listen, csp_violations
from .steps import end_task, post_task, ready

pytestmark = pytest.mark.django_db(transaction=True)

SANDBOX = "https://workersandbox.mturk.com"


def test_an_mturk_hit_is_posted_to_external_submit_only_after_the_data_are_stored(
    chromium, live_server, token
):
    study = Participant.objects.get(access_token=token).study
    found = Recruitment.objects.create(study=study, panel="mturk")
    page = chromium.new_page()
    page.set_default_timeout(15_000)
    reports = csp_listen(page)
    posted = []

    def external_submit(route):
        # MTurk's externalSubmit, answered here (no network leaves the test): what the form sent.
        posted.append((route.request.method, route.request.post_data))
        route.fulfill(status=200, content_type="text/html", body="<title>MTurk</title><p>HIT submitted</p>")

    page.route(f"{SANDBOX}/**", external_submit)

    page.goto(
        f"{live_server.url}/join/{found.public_token}/?workerId=A1WORKER&assignmentId=3ASSIGN&hitId=3HIT"
        f"&turkSubmitTo={SANDBOX}"
    )
    page.wait_for_selector(ready("#consent-accept"))
    participant = Participant.objects.get(study=study, panel_id="A1WORKER")
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
    assert "/p/" in page.url and posted == [], "no submission before the server confirmed"
    assert page.query_selector("#completion-form") is None
    assert page.is_hidden("#completion-ready")

    page.unroute("**/events/")
    page.unroute("**/completion/")
    page.wait_for_url(f"{SANDBOX}/**", timeout=20_000)
    assert page.url == f"{SANDBOX}/mturk/externalSubmit"
    method, body = posted[0]
    assert method == "POST"
    assert parse_qs(body) == {"assignmentId": ["3ASSIGN"], "completionCode": [found.code_completed]}
    assert len(posted) == 1
    assert csp_violations(page, reports) == []

    participant.refresh_from_db()
    assert participant.state == "completed"
    page.close()
