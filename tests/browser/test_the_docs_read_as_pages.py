"""In Chromium, /docs/ lists the documents by title; a document shows its tables as tables and its images
drawn, under the page's CSP (no violation); a link to another document opens it at its section."""

import pytest

from .csp import csp_listen, csp_violations

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_reader_opens_a_document_sees_a_table_and_follows_a_link(chromium, live_server):
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(15_000)
    reports = csp_listen(page)
    page.goto(f"{live_server.url}/docs/")
    page.wait_for_selector("#docs li")
    assert page.locator("#docs a", has_text="Setting up a study").count() == 1

    page.locator("#docs a", has_text="Setting up a study").click()
    page.wait_for_selector("article.doc h1")
    assert page.url.endswith("/docs/setting-up-a-study/")
    assert page.locator("article.doc table th").count() >= 2
    images = page.locator("article.doc img")
    assert images.count() >= 1
    images.first.scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelector('article.doc img').naturalWidth > 0")

    link = page.locator('article.doc a[href^="/docs/study-life-cycle/"]').first
    link.click()
    page.wait_for_url("**/docs/study-life-cycle/**")
    assert page.locator("article.doc h1").inner_text().strip()
    assert csp_violations(page, reports) == []
