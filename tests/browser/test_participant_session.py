"""The end-to-end "bot": Playwright drives Debian's chromium through a whole participant, with a network cut
on the events endpoint in the middle, and the database
must hold every event the page generated exactly once."""

import pytest

from studies.models import Event, Judgment, Query, SearchSession, ShownResult

from .csp import csp_listen, csp_violations
from .steps import consent_and_questionnaire, end_task, post_task, ready

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_participant_works_two_scenarios_and_every_event_is_stored_once(chromium, live_server, token):
    page = chromium.new_page()
    page.set_default_timeout(15_000)
    csp_reports = csp_listen(page)
    consent_and_questionnaire(page, live_server, token)

    # Scenario 1: a query, the second page, a document judged by keyboard, a scan mark.
    page.click(ready("#start-search"))
    page.wait_for_selector(ready("#search-app"))
    page.fill("#query", "wing")
    page.press("#query", "Enter")
    page.wait_for_function("() => document.querySelectorAll('.result').length === 10")
    page.click("#next-page")
    page.wait_for_function(
        "() => document.getElementById('results-info').textContent.startsWith('Results 11–20')"
    )
    page.click(".result:nth-child(1) .result-title")
    page.wait_for_function("() => document.getElementById('document-text').textContent.includes('wing')")
    page.keyboard.press("2")
    page.wait_for_function(
        "() => document.getElementById('judgment-status').textContent.includes('fairly relevant')"
    )
    page.keyboard.press("Escape")
    page.click(".result:nth-child(3) .scan-mark")
    page.wait_for_selector(".result.marked")

    # The network cut: requests to the events endpoint fail; every other one reaches the server but its answer
    # is lost, so the page must re-send events the server already stored.
    attempts = {"n": 0}

    def cut(route):
        attempts["n"] += 1
        if attempts["n"] % 2 == 0:
            route.fetch()
        route.abort()

    page.route("**/events/", cut)
    page.fill("#query", "heat transfer")
    page.press("#query", "Enter")
    page.click(".result:nth-child(2) .result-title")
    page.keyboard.press("1")
    page.keyboard.press("Escape")
    page.click(".result:nth-child(4) .scan-mark")
    page.wait_for_timeout(4000)
    assert page.evaluate("window.sessionlabOutbox.pending()") >= 4
    assert attempts["n"] >= 2
    page.unroute("**/events/")
    page.wait_for_function("() => window.sessionlabOutbox.pending() === 0", timeout=30_000)
    page.wait_for_function(
        "() => document.getElementById('results-info').textContent.startsWith('Results 1–10')"
    )
    end_task(page, "satisfied")

    # Post-task questionnaire, then scenario 2, stopped by giving up.
    post_task(page, 4)
    page.click(ready("#start-search"))
    page.wait_for_selector(ready("#search-app"))
    page.fill("#query", "pressure")
    page.press("#query", "Enter")
    page.wait_for_selector(".result")
    page.click(".result:nth-child(1) .result-title")
    page.wait_for_function("() => document.getElementById('document-text').textContent.length > 20")
    page.keyboard.press("3")
    page.wait_for_function(
        "() => document.getElementById('judgment-status').textContent.includes('highly relevant')"
    )
    end_task(page, "gave_up")
    post_task(page, 2)

    # The closing page is held until the outbox is empty.
    page.wait_for_selector("#saved:not([hidden])")
    generated = page.evaluate("window.sessionlabOutbox.sequence()")

    events = Event.objects.filter(participant__access_token=token)
    sequences = sorted(events.values_list("sequence", flat=True))
    assert sequences == list(range(1, generated + 1)), "every generated event stored exactly once"
    assert events.count() == generated
    assert not events.filter(payload__ack__ok=False).exists()

    first, second = SearchSession.objects.filter(assignment__participant__access_token=token).order_by(
        "assignment__position"
    )
    assert (first.end_reason, second.end_reason) == ("satisfied", "gave_up")
    assert first.post_task_answers == {"search_went_well": 4} and second.post_task_answers == {
        "search_went_well": 2
    }
    assert list(first.queries.values_list("text", flat=True)) == ["wing", "heat transfer"]
    # Marks at ranks 13 and then (during the cut, on the
    # same page of the first query) 14: the deepest is kept.
    assert list(first.queries.values_list("scan_mark_rank", flat=True)) == [14, None]
    assert ShownResult.objects.filter(query__session=first, query__position=1).count() == 20
    assert ShownResult.objects.filter(query__session=first, query__position=2).count() == 10
    assert Query.objects.filter(session=second).count() == 1
    assert sorted(Judgment.objects.filter(session=first).values_list("grade", flat=True)) == [1, 2]
    assert list(Judgment.objects.filter(session=second).values_list("grade", flat=True)) == [3]
    # Every page of the way under the Content-Security-Policy, and the browser refused nothing on any of them.
    assert csp_violations(page, csp_reports) == []
    closes = events.filter(type="document_close")
    assert closes.count() == 3 and all(e.payload["data"]["dwell_ms"] >= 0 for e in closes)
    page.close()
