"""The dashboard draws the charts in view first and the rest one at a time after the page has loaded (issue
38: a dozen charts asked for at once made the page take 3.4-6.4 s): every chart is asked for exactly once, the
first one asked is the first on the page, no two charts below the fold are fetched at the same moment, and in
the end every chart is drawn."""

import time

import pytest

from scoring.dashboards.registry import drawn_charts
from tests.browser.test_pages_obey_the_content_security_policy import _context, scored_study  # noqa: F401
from tests.dashboards.conftest import collection_docs  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db(transaction=True)


def test_charts_in_view_come_first_and_the_rest_one_at_a_time(chromium, live_server, scored_study):  # noqa: F811
    study, run, _searching, _arriving = scored_study
    context = _context(chromium, live_server, study.owner)
    page = context.new_page()
    page.set_viewport_size({"width": 1280, "height": 800})
    asked: list[tuple[str, float, str]] = []  # (url, time, "start" | "end")
    is_chart = lambda request: request.url.split("?")[0].endswith(".json") and "/charts/" in request.url  # noqa: E731
    page.on("request", lambda r: is_chart(r) and asked.append((r.url, time.monotonic(), "start")))
    page.on("requestfinished", lambda r: is_chart(r) and asked.append((r.url, time.monotonic(), "end")))
    page.goto(f"{live_server.url}/scoring/{study.slug}/runs/{run.pk}/")
    page.locator(".js-plotly-plot").nth(len(drawn_charts(2)) - 1).wait_for(timeout=60_000)

    urls_on_page = page.eval_on_selector_all(".chart[data-url]", "els => els.map(e => e.dataset.url)")
    started = [url for url, _t, kind in asked if kind == "start"]
    assert len(started) == len(urls_on_page) == len(set(started))  # each once
    assert urls_on_page[0] in started[0]
    assert page.eval_on_selector_all(".chart[data-url]", "els => els.every(e => e.dataset.drawn === '1')")
    # Below the fold, one at a time: the last chart's request starts after the one before it has ended.
    ends = {url: t for url, t, kind in asked if kind == "end"}
    starts = {url: t for url, t, kind in asked if kind == "start"}
    assert starts[started[-1]] >= ends[started[-2]]
