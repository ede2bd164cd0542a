"""In a real browser (Debian's Chromium through Playwright): the study page shows a participant's session
starting and their state changing while it stays open, without a reload, and breaks no content policy."""

import pytest

from studies.design import services
from tests.browser.csp import csp_listen, csp_violations
from tests.participation.conftest import start


@pytest.fixture
def running_study(django_user_model):
    owner = django_user_model.objects.create_user("alice", password="alice-password", is_staff=True)
    study = services.study_create(
        owner=owner, name="Browser study", consent_text="Consent text.", status="open"
    )
    services.scenario_add(study=study, code="S1", title="Wings", text="Find reports on wings.", topic_id="1")
    services.system_add(study=study, code="A", name="A", config={"configuration": "bm25_title_text"})
    (participant,) = services.participants_enrol(study=study, count=1)
    return study, participant


@pytest.mark.django_db(transaction=True)
def test_the_study_page_shows_a_session_start_without_a_reload(live_server, running_study, chromium):
    study, participant = running_study
    context = chromium.new_context()
    page = context.new_page()
    page.set_default_timeout(20_000)
    reports = csp_listen(page)
    page.goto(f"{live_server.url}/accounts/login/?next=/studies/{study.slug}/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "alice-password")
    page.keyboard.press("Enter")
    page.wait_for_selector("#participants-progress")
    assert "1 participant enrolled, 0 started" in page.inner_text("#study-counts")
    assert "Invited" in page.inner_text("#participants tbody")
    page.evaluate("window.drawnOnce = true")  # gone if the page reloads
    start(participant)
    # The refresh, every 5 s (static/js/study-progress.js); a locator waits without evaluating a string, which
    # the content policy forbids.
    page.locator("#participants tbody .order", has_text="S1 on A …").wait_for()
    assert "1 participant enrolled, 1 started" in page.inner_text("#study-counts")
    assert page.inner_text("#participants tbody .participant-state") == "Active"  # was "Invited"
    assert page.evaluate("window.drawnOnce") is True
    assert csp_violations(page, reports) == []
    context.close()
