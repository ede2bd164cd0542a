"""In Chromium: Figure 4's stop labels do not sit on one another, Tables 1 and 2 show every row without an
inner scroll and without a tall empty chart, and the agreement page's
4-row table is as tall as its 4 rows beside a 16-row one."""

import pytest
from django.urls import reverse

from scoring import services
from scoring.dashboards.registry import drawn_charts

from .conftest import build_study

pytestmark = pytest.mark.django_db(transaction=True)

OVERLAPS = """(selector) => {
  const boxes = Array.from(document.querySelectorAll(selector)).map((el) => el.getBoundingClientRect());
  const hits = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1)
      hits.push([i, j]);
  }
  return [boxes.length, hits];
}"""


def test_labels_and_tables_fit(chromium, live_server, designed_study, collection_docs, client):
    build_study(designed_study, collection_docs, participants=16)
    run = services.scoring_run_create(study=designed_study)
    client.force_login(designed_study.owner)
    context = chromium.new_context(viewport={"width": 1366, "height": 900})
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    page = context.new_page()
    page.goto(live_server.url + reverse("scoring:run_detail", args=[designed_study.slug, run.pk]))
    page.wait_for_function(
        f"() => document.querySelectorAll('.js-plotly-plot').length === {len(drawn_charts(2))}", timeout=30000
    )

    count, hits = page.evaluate(OVERLAPS, "#sessions .annotation")
    assert count == 8 and hits == []  # 16 participants: 8 sessions of S1 on A, each stop labelled apart

    for name, rows in (("participants", 3), ("query-counts", 2)):
        chart = page.locator(f"#{name} .chart").bounding_box()
        cells = page.locator(f"#{name} .js-plotly-plot g.y-column").first.locator("g.column-cell")
        assert cells.count() == rows + 1  # the header and every row drawn
        last = cells.nth(rows).bounding_box()
        assert last["y"] + last["height"] <= chart["y"] + chart["height"]  # inside the chart, not cut off
        assert chart["height"] < 420  # and no tall empty chart under a short table
        assert page.locator(f"#{name} .scrollbar-kit .scrollbar-glyph").count() == 0 or not page.is_visible(
            f"#{name} .scrollbar-kit .scrollbar-glyph"
        )

    page.goto(live_server.url + reverse("assessment:agreement", args=[designed_study.slug]))
    per_participant = page.locator("#agreement-per-participant").bounding_box()["height"]
    per_scenario = page.locator("#agreement-per-scenario").bounding_box()["height"]
    row = page.locator("#agreement-per-scenario tbody tr").first.bounding_box()["height"]
    assert page.locator("#agreement-per-scenario tbody tr").count() == 4
    assert per_scenario < 7 * row < per_participant
    context.close()
