"""A participant pastes half an emoji (a lone UTF-16 surrogate) into the search box, goes on searching and
finishes: every action is stored, the query kept with U+FFFD, and the closing page opens. Before, every later
request answered 500 and the page stayed on "Saving 3 actions…" for good.

Also the outbox's own rules: an event the server refuses leaves it with a short notice, and a batch the server
keeps failing (a 500) is split until the failing event is alone, so the others are stored."""

import json
import time

import pytest

from studies.models import Event, Query, SearchSession

from .steps import consent_and_questionnaire, end_task, post_task, ready

pytestmark = pytest.mark.django_db(transaction=True)


def wait_until(page, expression: str, timeout: float = 15) -> None:
    """page.wait_for_function without its eval, which the pages' Content-Security-Policy forbids: the
    expression is polled through the DevTools protocol instead."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {expression}")
        time.sleep(0.1)


def _to_search(page, live_server, token):
    consent_and_questionnaire(page, live_server, token)
    page.click(ready("#start-search"))
    page.wait_for_selector(ready("#search-app"))


def test_half_an_emoji_in_the_search_box_is_kept_and_the_participant_finishes(chromium, live_server, token):
    page = chromium.new_page()
    page.set_default_timeout(15_000)
    _to_search(page, live_server, token)

    # The paste: what the box then holds (Playwright cannot type half a character).
    page.evaluate("document.getElementById('query').value = 'wing ' + String.fromCharCode(0xD83D)")
    page.press("#query", "Enter")
    wait_until(page, "document.querySelectorAll('.result').length === 10")
    page.fill("#query", "heat transfer")
    page.press("#query", "Enter")
    wait_until(page, "document.getElementById('results-info').textContent.startsWith('Results 1–10')")
    page.click(".result:nth-child(1) .result-title")
    page.keyboard.press("2")
    wait_until(page, "document.getElementById('judgment-status').textContent.includes('fairly relevant')")
    page.keyboard.press("Escape")
    end_task(page, "satisfied")
    post_task(page, 4)
    page.click(ready("#start-search"))
    page.wait_for_selector(ready("#search-app"))
    page.fill("#query", "pressure")
    page.press("#query", "Enter")
    page.wait_for_selector(".result")
    end_task(page, "gave_up")
    post_task(page, 4)
    page.wait_for_selector("#saved:not([hidden])")

    generated = page.evaluate("window.sessionlabOutbox.sequence()")
    events = Event.objects.filter(participant__access_token=token)
    assert sorted(events.values_list("sequence", flat=True)) == list(range(1, generated + 1))
    assert not events.filter(payload__ack__ok=False).exists()
    first = (
        SearchSession.objects.filter(assignment__participant__access_token=token)
        .order_by("assignment__position")
        .first()
    )
    assert list(first.queries.values_list("text", flat=True)) == ["wing \ufffd", "heat transfer"]
    assert events.get(type="query", payload__data__text="wing \ufffd").payload["data"]["normalized"] == [
        "text"
    ]
    page.close()


def test_a_refused_event_leaves_with_a_notice_and_a_failing_one_is_isolated(chromium, live_server, token):
    page = chromium.new_page()
    page.set_default_timeout(15_000)
    _to_search(page, live_server, token)

    # A server that answers 500 to any batch holding the event "poison" (a bug for that content).
    sizes = []

    def poisoned(route):
        body = route.request.post_data or ""
        if route.request.headers.get("content-type", "").startswith("application/json"):
            sizes.append(len(json.loads(body)["events"]))
        if '"poison"' in body:  # the fetch's JSON and the beacon's form alike
            route.fulfill(status=500, body="Server Error")
        else:
            route.continue_()

    page.route("**/events/", poisoned)
    # Events already waiting (a tab that was closed): one the server refuses (seq beyond its column), one that
    # breaks the server, and six good ones around them.
    session = page.evaluate("JSON.parse(document.getElementById('sessionlab-client').textContent).session")
    key = f"sessionlab:{token}:outbox"
    waiting = [
        {"id": f"good{n}", "seq": 100 + n, "type": "tab_hidden", "session": session, "data": {}}
        for n in range(6)
    ]
    waiting.insert(2, {"id": "refused", "seq": 2**40, "type": "tab_hidden", "session": session, "data": {}})
    waiting.insert(4, {"id": "poison", "seq": 99, "type": "tab_hidden", "session": session, "data": {}})
    # Put there before the page's script runs (a beacon at the reload's pagehide would deliver them unseen).
    wait_until(page, "window.sessionlabOutbox.pending() === 0")
    page.add_init_script(
        f"if (!sessionStorage.getItem('seeded')) {{ sessionStorage.setItem('seeded', '1');"
        f" localStorage.setItem({json.dumps(key)}, {json.dumps(json.dumps(waiting))}); }}"
    )
    page.reload()
    page.wait_for_selector(ready("#search-app"))
    wait_until(page, "window.sessionlabOutbox.pending() === 0", 30)
    assert "could not be saved" in page.text_content("#outbox-status")
    assert sizes[0] == 8 and 1 in sizes  # the first batch held all of them; the failing one went alone
    stored = set(Event.objects.filter(type="tab_hidden").values_list("client_event_id", flat=True))
    assert stored == {f"good{n}" for n in range(6)}

    # The page goes on: a query is stored as usual.
    page.unroute("**/events/")
    page.fill("#query", "wing")
    page.press("#query", "Enter")
    wait_until(page, "document.querySelectorAll('.result').length === 10")
    wait_until(page, "window.sessionlabOutbox.pending() === 0")
    assert Query.objects.filter(session__assignment__participant__access_token=token).count() == 1
    page.close()


def test_a_server_answering_503_for_a_while_loses_nothing(chromium, live_server, token):
    """An outage answers every batch with a 5xx: the page splits and backs off, but drops nothing, since the
    server stores nothing meanwhile; once it is back every event is stored."""
    page = chromium.new_page()
    page.set_default_timeout(15_000)
    _to_search(page, live_server, token)
    page.fill("#query", "wing")
    page.press("#query", "Enter")
    wait_until(page, "document.querySelectorAll('.result').length === 10")

    page.route("**/events/", lambda route: route.fulfill(status=503, body="Service Unavailable"))
    page.click(".result:nth-child(1) .result-title")
    page.keyboard.press("2")
    page.keyboard.press("Escape")
    page.click(".result:nth-child(3) .scan-mark")
    page.fill("#query", "heat transfer")
    page.press("#query", "Enter")
    page.wait_for_timeout(8000)
    assert page.evaluate("window.sessionlabOutbox.pending()") >= 5
    page.unroute("**/events/")
    wait_until(page, "window.sessionlabOutbox.pending() === 0", 60)
    assert "could not be saved" not in (page.text_content("#outbox-status") or "")
    generated = page.evaluate("window.sessionlabOutbox.sequence()")
    events = Event.objects.filter(participant__access_token=token)
    assert sorted(events.values_list("sequence", flat=True)) == list(range(1, generated + 1))
    assert Query.objects.filter(session__assignment__participant__access_token=token).count() == 2
    page.close()
