"""At 1366x768 a long document open in its panel leaves every grade button in sight, inside the
panel's visible box, without scrolling the page or the panel."""

import pytest

from studies.models import Document

from .test_the_search_page_mends import search, to_search

pytestmark = pytest.mark.django_db(transaction=True)

BOXES = """() => {
  const panel = document.getElementById('document-view').getBoundingClientRect();
  const top = Math.max(panel.top, 0), bottom = Math.min(panel.bottom, window.innerHeight);
  return { top, bottom, scrollY: window.scrollY,
    buttons: Array.from(document.querySelectorAll('.grade-button'))
    .map((b) => { const r = b.getBoundingClientRect(); return [r.top, r.bottom, r.left, r.right]; }) };
}"""


def test_the_grade_buttons_are_inside_the_panels_visible_box(chromium, live_server, token):
    long_text = "\n\n".join(
        f"Paragraph {n}: " + "boundary layer flow over a swept wing " * 12 for n in range(60)
    )
    Document.objects.update(text=long_text)
    page = chromium.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(15_000)
    to_search(page, live_server, token)
    search(page, "wing")
    page.click(".result:nth-child(4) .result-title")
    page.wait_for_selector("#document-view:not([hidden])")
    panel = page.locator("#document-view")
    assert panel.evaluate("(p) => p.scrollHeight > p.clientHeight * 2")  # long: the panel scrolls
    boxes = page.evaluate(BOXES)
    assert boxes["scrollY"] == 0 and boxes["buttons"]
    for top, bottom, _, _ in boxes["buttons"]:
        assert boxes["top"] <= top and bottom <= boxes["bottom"] <= 768, boxes
    # Still so with the panel scrolled halfway and the page scrolled down a little.
    panel.evaluate("(p) => { p.scrollTop = p.scrollHeight / 2; }")
    page.mouse.wheel(0, 300)
    page.wait_for_timeout(200)
    boxes = page.evaluate(BOXES)
    for top, bottom, _, _ in boxes["buttons"]:
        assert boxes["top"] <= top and bottom <= boxes["bottom"] <= 768, boxes
    page.close()
