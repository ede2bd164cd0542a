"""On a phone (390x844) an opened document was a sheet over the whole page, covering the search box
and its button. The search box now stays in reach above the sheet: the browser's hit test at the centre of the
input and of the button finds them, a new search can be typed and run with the document open, and every grade
button is inside the sheet's visible box, in the window, however long the document."""

import pytest

from studies.models import Document

from .test_the_search_page_mends import search, to_search, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

WIDTH, HEIGHT = 390, 844

HIT = """(id) => { const b = document.getElementById(id).getBoundingClientRect();
  const el = document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2);
  return { id: el && el.id, top: b.top, bottom: b.bottom, left: b.left, right: b.right }; }"""

BOXES = """() => {
  const panel = document.getElementById('document-view').getBoundingClientRect();
  const form = document.getElementById('search-form').getBoundingClientRect();
  return { panelTop: panel.top, panelBottom: panel.bottom, formBottom: form.bottom,
    buttons: Array.from(document.querySelectorAll('.grade-button')).map((b) => {
      const r = b.getBoundingClientRect();
      const el = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
      return [r.top, r.bottom, r.left, r.right, !!el && b.contains(el)]; }) };
}"""


def assert_search_and_grades_in_reach(page) -> None:
    for element in ("query", "search-button"):
        hit = page.evaluate(HIT, element)
        assert hit["id"] == element, hit
        assert 0 <= hit["top"] and hit["bottom"] <= HEIGHT and 0 <= hit["left"] and hit["right"] <= WIDTH, hit
    boxes = page.evaluate(BOXES)
    assert boxes["formBottom"] <= boxes["panelTop"], boxes  # the sheet starts below the search box
    assert boxes["buttons"]
    for top, bottom, left, right, reachable in boxes["buttons"]:
        assert boxes["panelTop"] <= top and bottom <= min(boxes["panelBottom"], HEIGHT), boxes
        assert 0 <= left and right <= WIDTH and reachable, boxes


def test_the_search_box_and_the_grades_stay_in_reach_of_a_long_document(chromium, live_server, token):
    Document.objects.update(
        text="\n\n".join(
            f"Paragraph {n}: " + "boundary layer flow over a swept wing " * 12 for n in range(60)
        )
    )
    page = chromium.new_page(viewport={"width": WIDTH, "height": HEIGHT}, is_mobile=True, has_touch=True)
    page.set_default_timeout(15_000)
    to_search(page, live_server, token)
    search(page, "wing")
    page.locator(".result:nth-child(4) .result-title").scroll_into_view_if_needed()
    page.click(".result:nth-child(4) .result-title")
    page.wait_for_selector("#document-view:not([hidden])")
    panel = page.locator("#document-view")
    assert panel.evaluate("(p) => p.scrollHeight > p.clientHeight * 2")  # long: the sheet scrolls
    assert_search_and_grades_in_reach(page)

    # Still so with the sheet scrolled halfway.
    panel.evaluate("(p) => { p.scrollTop = p.scrollHeight / 2; }")
    page.wait_for_timeout(200)
    assert_search_and_grades_in_reach(page)

    # A grade is given by a tap, and the search box takes a tap and a new query with the document still open.
    page.tap(".grade-button[data-grade='2']")
    wait_until(page, "document.querySelector('.grade-button.chosen') !== null")
    page.tap("#query")
    assert page.evaluate("document.activeElement.id") == "query"
    page.fill("#query", "heat")
    page.tap("#search-button")
    wait_until(page, "document.getElementById('document-view').hidden")  # a new search closes the document
    wait_until(page, "document.getElementById('results-info').textContent.startsWith('Results 1–')")
    page.close()
