"""A reload, or the link opened on another device, shows the search page as it was (the last query's
last page shown, the grades given) without logging a new query; the reload itself is logged by the server."""

import pytest

from studies.models import Event, GradeLevel, Judgment, Query

from .csp import csp_listen, csp_violations
from .steps import ready
from .test_the_search_page_mends import search, to_search, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def shown(page):
    return (
        page.text_content("#results-info"),
        page.locator(".result").evaluate_all("(items) => items.map((i) => i.dataset.doc)"),
        page.text_content("#page-number"),
    )


def test_a_reload_and_another_device_show_the_same_results_and_grades(chromium, live_server, token):
    page = chromium.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(15_000)
    reports = csp_listen(page)
    to_search(page, live_server, token)
    search(page, "wing")
    page.click("#next-page")
    wait_until(page, "document.getElementById('page-number').textContent === 'Page 2'")
    before = shown(page)
    doc = before[1][1]
    page.click(".result:nth-child(2) .result-title")
    page.wait_for_selector("#document-view:not([hidden])")
    page.keyboard.press("2")
    wait_until(page, "document.querySelector('.grade-button.chosen') !== null")
    page.keyboard.press("Escape")

    # Reloaded at once: the judgment may still be in this device's outbox; the page shows it all the same.
    page.reload()
    page.wait_for_selector(ready("#search-app"))
    wait_until(page, "document.getElementById('page-number').textContent === 'Page 2'")
    assert shown(page) == before
    assert page.input_value("#query") == "wing"
    label = GradeLevel.objects.get(value=2).label
    assert page.text_content(f".result[data-doc='{doc}'] .judged") == label
    page.click(f".result[data-doc='{doc}'] .result-title")
    wait_until(page, "document.querySelector('.grade-button.chosen') !== null")
    assert page.locator(".grade-button.chosen").get_attribute("data-grade") == "2"
    page.keyboard.press("Escape")
    wait_until(page, "window.sessionlabOutbox.pending() === 0")
    assert Query.objects.filter(session__assignment__participant__access_token=token).count() == 1
    assert Judgment.objects.get(document__external_id=doc).grade == 2
    assert Event.objects.filter(type="page_reload").count() == 1

    # Another device (nothing in its storage): the same list and grade, from the server alone; the restored
    # query still pages.
    other = chromium.new_context(viewport={"width": 1366, "height": 768}).new_page()
    other.set_default_timeout(15_000)
    other.goto(f"{live_server.url}/p/{token}/")
    other.wait_for_selector(ready("#search-app"))
    wait_until(other, "document.getElementById('page-number').textContent === 'Page 2'")
    assert shown(other) == before
    assert other.text_content(f".result[data-doc='{doc}'] .judged") == label
    other.click("#prev-page")
    wait_until(other, "document.getElementById('page-number').textContent === 'Page 1'")
    assert other.locator(".result").count() == 10
    wait_until(other, "window.sessionlabOutbox.pending() === 0")
    assert Query.objects.filter(session__assignment__participant__access_token=token).count() == 1
    assert Event.objects.filter(type="page_reload").count() == 2
    assert csp_violations(page, reports) == []
    other.context.close()
    page.close()
