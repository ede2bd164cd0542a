"""An away span starts, on the server's timeline, when the window really lost focus, even on a page whose
scripts arrived late: the page's clock is tied to the moment the server wrote the page (the response's
first byte, Navigation Timing), not to when the scripts ran (static/js/participant/server-time.js). Before,
every span started early by the page's load time (0.5-0.8 s measured in Chromium, 1.6 s with this test's
delay)."""

import time

import pytest

from studies.models import AttentionSpan, SearchSession

from .steps import consent_and_questionnaire, ready
from .test_the_search_page_mends import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

SCRIPT_DELAY_SECONDS = 1.5
TOLERANCE_MS = 150


def test_an_away_span_starts_when_the_window_lost_focus_on_a_slow_page(chromium, live_server, token):
    page = chromium.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(20_000)
    consent_and_questionnaire(page, live_server, token)

    def late(route):  # the participant's modules arrive late, as on a slow connection
        time.sleep(SCRIPT_DELAY_SECONDS)
        route.continue_()

    page.route("**/static/js/participant*", late)
    page.click(ready("#start-search"))
    page.wait_for_selector(ready("#search-app"))
    page.unroute("**/static/js/participant*")
    time.sleep(0.3)
    page.evaluate("window.dispatchEvent(new Event('blur'))")
    blurred_at = time.time()
    time.sleep(0.5)
    page.evaluate("window.dispatchEvent(new Event('focus'))")
    page.evaluate("window.sessionlabReports.attention()")
    wait_until(page, "window.sessionlabOutbox.pending() === 0", timeout=20)

    session = SearchSession.objects.get(assignment__participant__access_token=token, assignment__position=1)
    (span,) = AttentionSpan.objects.filter(session=session, kind="blur")
    expected_ms = (blurred_at - session.started_at.timestamp()) * 1000
    assert abs(span.start_ms - expected_ms) <= TOLERANCE_MS, (span.start_ms, round(expected_ms))
    page.close()
