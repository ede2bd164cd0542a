"""The participant's search page, as a review found it in Chromium and as it must be now: no pager before a
search; ending a task asks first (and says when nothing was searched); the chosen grade is marked; an open
document leaves the search button and the grade buttons in reach at 1366x768; on a phone the stop buttons sit
below the search box; "I stopped scanning here" is explained once and can be undone or moved; the snippets
highlight the query's words; every participant page past the consent links to the withdrawal."""

import time

import pytest

from studies.models import Participant, Query, SearchSession

from .csp import csp_listen, csp_violations
from .steps import consent_and_questionnaire, end_task, post_task, ready

pytestmark = pytest.mark.django_db(transaction=True)


def wait_until(page, expression: str, timeout: float = 15) -> None:
    """Poll an expression through the DevTools protocol (no eval in the page: its CSP forbids it)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {expression}")
        time.sleep(0.1)


def to_search(page, live_server, token) -> None:
    consent_and_questionnaire(page, live_server, token)
    page.click(ready("#start-search"))
    page.wait_for_selector(ready("#search-app"))


def search(page, text: str) -> None:
    page.fill("#query", text)
    page.press("#query", "Enter")
    wait_until(page, "document.getElementById('results-info').textContent.startsWith('Results 1–')")


def test_the_pager_waits_for_results_and_ending_asks_first(chromium, live_server, token):
    page = chromium.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(15_000)
    reports = csp_listen(page)
    to_search(page, live_server, token)
    assert (
        not page.is_visible("#pager")
        and not page.is_visible("#prev-page")
        and not page.is_visible("#next-page")
    )
    assert not page.is_visible("#scan-help")

    # Ending before any search: a question, which says nothing was searched; "Keep searching" keeps the task.
    page.click("#stop-satisfied")
    page.wait_for_selector("#end-dialog[open]")
    assert page.is_visible("#end-no-queries")
    assert "found what you need" in page.text_content("#end-question")
    assert page.evaluate("document.activeElement.id") == "end-cancel"
    page.click("#end-cancel")
    assert not page.is_visible("#end-dialog")
    page.keyboard.press("Escape")
    assert page.is_visible("#search-app")

    search(page, "wing")
    assert page.is_visible("#pager") and page.is_visible("#next-page")
    page.click("#stop-gave-up")
    page.wait_for_selector("#end-dialog[open]")
    assert not page.is_visible("#end-no-queries")
    assert "without finding" in page.text_content("#end-question")
    page.keyboard.press("Escape")  # the dialog's own cancel
    assert not page.is_visible("#end-dialog") and page.is_visible("#search-app")
    end_task(page, "gave_up")
    post_task(page, 3)
    page.wait_for_selector("#start-search")
    session = SearchSession.objects.get(assignment__participant__access_token=token, assignment__position=1)
    assert session.end_reason == "gave_up"
    assert csp_violations(page, reports) == []
    page.close()


def test_the_chosen_grade_is_marked_and_the_document_covers_neither_search_nor_grades(
    chromium, live_server, token
):
    page = chromium.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(15_000)
    to_search(page, live_server, token)
    search(page, "wing")
    page.click(".result:nth-child(2) .result-title")
    page.wait_for_selector("#document-view:not([hidden])")
    assert page.locator(".grade-button.chosen").count() == 0

    # The search button is not under the panel: the browser's hit test at its centre finds the button.
    hit = page.evaluate(
        """() => { const b = document.getElementById('search-button').getBoundingClientRect();
                   const el = document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2);
                   return el && el.id; }"""
    )
    assert hit == "search-button"
    # Every grade button is inside the window, without scrolling the page or the panel.
    for box in page.locator(".grade-button").evaluate_all(
        "(buttons) => buttons.map((b) => { const r = b.getBoundingClientRect(); return [r.top, r.bottom]; })"
    ):
        assert 0 <= box[0] and box[1] <= 768

    page.keyboard.press("2")
    wait_until(page, "document.querySelector('.grade-button.chosen') !== null")
    chosen = page.locator(".grade-button.chosen")
    assert chosen.count() == 1 and chosen.get_attribute("data-grade") == "2"
    assert chosen.get_attribute("aria-pressed") == "true"
    page.click(".grade-button[data-grade='1']")
    wait_until(page, "document.querySelector('.grade-button.chosen').dataset.grade === '1'")
    page.keyboard.press("Escape")

    page.click(".result:nth-child(3) .result-title")  # another document: nothing chosen yet
    page.wait_for_selector("#document-view:not([hidden])")
    assert page.locator(".grade-button.chosen").count() == 0
    page.keyboard.press("Escape")
    page.click(".result:nth-child(2) .result-title")  # back to the judged one: its grade is marked again
    wait_until(page, "document.querySelector('.grade-button.chosen') !== null")
    assert page.locator(".grade-button.chosen").get_attribute("data-grade") == "1"
    page.close()


def test_on_a_phone_the_stop_buttons_sit_below_the_search_box(chromium, live_server, token):
    page = chromium.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page.set_default_timeout(15_000)
    to_search(page, live_server, token)
    search_box = page.locator("#search-form").bounding_box()
    for button in ("#stop-satisfied", "#stop-gave-up"):
        assert page.locator(button).bounding_box()["y"] > search_box["y"] + search_box["height"]
    search(page, "wing")
    results = page.locator("#results").bounding_box()
    assert page.locator("#stop-satisfied").bounding_box()["y"] > results["y"]
    page.close()


def test_the_scan_mark_is_explained_once_and_can_be_undone_or_moved(chromium, live_server, token):
    page = chromium.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(15_000)
    to_search(page, live_server, token)
    search(page, "wing")
    assert page.is_visible("#scan-help") and page.locator(".scan-help").count() == 1
    assert "undo" in page.text_content("#scan-help")

    # A mis-click undone: the same link again; the next query finds nothing sent for the first.
    page.click(".result:nth-child(3) .scan-mark")
    page.wait_for_selector(".result.marked")
    assert "undo" in page.text_content(".result.marked .scan-mark")
    page.click(".result:nth-child(3) .scan-mark")
    assert page.locator(".result.marked").count() == 0
    search(page, "heat transfer")

    # A mark moved up: only the final one counts (the server would keep the deepest of two sent).
    page.click(".result:nth-child(6) .scan-mark")
    page.click(".result:nth-child(2) .scan-mark")
    assert page.locator(".result.marked").count() == 1
    assert page.locator(".result.marked").get_attribute("data-rank") == "2"
    end_task(page, "satisfied")
    post_task(page, 4)
    page.wait_for_selector("#start-search")
    marks = Query.objects.filter(session__assignment__participant__access_token=token).order_by("position")
    assert list(marks.values_list("scan_mark_rank", flat=True)) == [None, 2]
    page.close()


def test_snippets_highlight_the_query_words(chromium, live_server, token):
    page = chromium.new_page()
    page.set_default_timeout(15_000)
    to_search(page, live_server, token)
    search(page, "wing")
    marked = page.locator(".result .snippet mark").all_text_contents()
    assert marked and {text.lower() for text in marked} <= {"wing", "wings"}
    search(page, "heat transfer")
    marked = {text.lower() for text in page.locator(".result .snippet mark").all_text_contents()}
    assert marked and marked <= {"heat", "transfer"}
    # The page builds the marks as elements from text: a snippet never becomes markup.
    assert page.locator(".result .snippet *:not(mark)").count() == 0
    page.close()


def test_every_participant_page_past_the_consent_links_to_the_withdrawal(chromium, live_server, token):
    page = chromium.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/p/{token}/")
    page.wait_for_selector(ready("#consent-accept"))
    assert page.locator("#withdraw-link").count() == 0  # before consenting: "I do not want to take part"
    page.click("#consent-accept")
    seen = []
    page.wait_for_selector(ready("form#questionnaire"))
    seen.append(("questionnaire", page.is_visible("#withdraw-link")))
    page.fill("input[name=search_engine_years]", "7")
    page.fill("input[name=domain_years]", "21")
    page.check("input[name=search_skill][value='3']")
    page.click("form#questionnaire button")
    page.wait_for_selector("#start-search")
    seen.append(("scenario", page.is_visible("#withdraw-link")))
    page.click(ready("#start-search"))
    page.wait_for_selector(ready("#search-app"))
    seen.append(("search", page.is_visible("#withdraw-link")))
    search(page, "wing")
    end_task(page, "satisfied")
    page.wait_for_selector("form#post-task")
    seen.append(("post-task", page.is_visible("#withdraw-link")))
    assert seen == [(name, True) for name, _ in seen]

    page.click("#withdraw-link")
    page.wait_for_selector("button#withdraw")
    assert page.locator("#withdraw-link").count() == 0
    page.click("button#withdraw")
    page.wait_for_load_state()
    assert Participant.objects.get(access_token=token).withdrawn_at is not None
    assert page.locator("#withdraw-link").count() == 0
    page.close()
