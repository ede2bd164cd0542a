"""In Chromium, on a run's dashboard like the demo's (32 sessions on two systems, post-task ratings, the
meta-evaluation's 21-row table under its chart, the statistics table beside its boxes), every Plotly table
shows all its rows: the last row's bottom inside the table's area and less than 40 px above its bottom (and
above the chart's own bottom where the table ends the figure: no empty band, no CSS minimum under it), no
text spilling out of its column; and no figure's legend is drawn over its title or an axis title
(issue 38)."""

import numpy as np
import pytest
from django.urls import reverse

from scoring import services
from scoring.dashboards.registry import drawn_charts
from studies.models import SearchSession
from tests.browser.test_pages_obey_the_content_security_policy import _context
from tests.dashboards.conftest import build_study, collection_docs  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db(transaction=True)

GAP_PX = 40

QUESTIONNAIRE = [
    {"name": "went_well", "label": "How well did this search go?", "kind": "scale", "min": 1, "max": 5},
    {"name": "effort", "label": "Effort (0-10)", "kind": "integer", "min": 0, "max": 10},
]

# Per drawn table: its rows, the rows Plotly rendered, the last row's bottom against the table's area and
# the chart's bottom, and any cell whose text runs past its column. Per figure with a title and a legend:
# which of the title and the axis titles the legend's box meets; and whether the title is inside the figure,
# above the plot area.
MEASURE = """() => {
  const box = (el) => el.getBoundingClientRect();
  const meet = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 &&
                         b.top < a.bottom - 1;
  return Array.from(document.querySelectorAll('.js-plotly-plot')).map((gd) => {
    const chart = gd.closest('section').id;
    const size = gd._fullLayout._size;
    const frame = box(gd);
    const traces = gd._fullData.filter((trace) => trace.type === 'table');
    const tables = Array.from(gd.querySelectorAll('g.table')).map((table, k) => {
      const y = traces[k].domain.y;
      const areaBottom = frame.top + size.t + size.h * (1 - y[0]);
      const column = table.querySelector('g.y-column');
      const rects = Array.from(column.querySelectorAll('g.column-block'))
        .filter((block) => block.__data__.type !== 'header')
        .flatMap((block) => Array.from(block.querySelectorAll('g.column-cell > rect.cell-rect')));
      const last = Math.max(...rects.map((rect) => box(rect).bottom));
      const spills = Array.from(table.querySelectorAll('g.column-cell')).filter((cell) => {
        const text = box(cell.querySelector('text.cell-text'));
        return text.width > 0 && text.right > box(cell.querySelector('rect.cell-rect')).right + 1;
      }).map((cell) => cell.querySelector('text.cell-text').textContent);
      const rows = Math.max(0, ...traces[k].cells.values.map((c) => c.length));
      return {chart, rows, rendered: rects.length,
              belowArea: areaBottom - last, belowChart: y[0] === 0 ? frame.bottom - last : null, spills};
    });
    const legend = gd.querySelector('g.legend rect.bg');
    const titles = Array.from(gd.querySelectorAll('.infolayer > g[class^="g-"][class$="title"] text'));
    const met = legend ? titles.filter((t) => t.textContent && meet(box(legend), box(t)))
      .map((t) => t.parentNode.getAttribute('class')) : [];
    const title = gd.querySelector('.g-gtitle .gtitle');
    const titleInside = !title ||
      (box(title).top >= frame.top - 1 && box(title).bottom <= frame.top + size.t);
    return {chart, tables, legend: Boolean(legend), titles: titles.length, met, titleInside};
  });
}"""


@pytest.fixture
def rated_study(designed_study, collection_docs, django_capture_on_commit_callbacks):  # noqa: F811
    """The dashboards' constructed study (8 participants, 32 sessions), each session rated after the task,
    scored by a run that also computes two other measures: 7 measures, so the meta-evaluation's table has
    7 x 3 scopes = 21 rows."""
    built = build_study(designed_study, collection_docs)
    study = built.study
    study.post_task_questionnaire = QUESTIONNAIRE
    study.save(update_fields=["post_task_questionnaire"])
    rng = np.random.default_rng(38)
    for session in SearchSession.objects.filter(assignment__participant__study=study):
        session.post_task_answers = {"went_well": int(rng.integers(1, 6)), "effort": int(rng.integers(0, 11))}
        session.save(update_fields=["post_task_answers"])
    with django_capture_on_commit_callbacks(execute=True):
        run = services.scoring_run_create(study=study, measures=["sdcg_per_query", "nsdcg"])
    run.refresh_from_db()
    assert run.status == "done", run.error
    return study, run


def test_every_table_shows_its_rows_and_no_legend_meets_a_title(chromium, live_server, rated_study):
    study, run = rated_study
    context = _context(chromium, live_server, study.owner)
    page = context.new_page()
    page.set_viewport_size({"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(live_server.url + reverse("scoring:run_detail", args=[study.slug, run.pk]))
    drawn = len(drawn_charts(2))
    page.wait_for_function(
        f"() => document.querySelectorAll('.js-plotly-plot').length === {drawn}", timeout=60_000
    )
    # Each chart says when its tables are sized (static/js/table-fit.js).
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".every((gd) => gd.dataset.tablesFit === '1')",
        timeout=30_000,
    )
    figures = page.evaluate(MEASURE)
    _assert_tables_fit(figures, spills=True)
    with_legends = [f for f in figures if f["legend"] and f["titles"]]
    assert {f["chart"] for f in with_legends} >= {"curves", "sessions", "meta-evaluation"}
    assert [(f["chart"], f["met"]) for f in with_legends if f["met"]] == []
    assert [f["chart"] for f in figures if not f["titleInside"]] == []  # in the figure, above the plot

    # A narrower window: every figure follows its width and its tables are fitted again (their rows wrap).
    widths = page.evaluate(
        "() => Array.from(document.querySelectorAll('.js-plotly-plot'), (gd) => gd._fullLayout.width)"
    )
    page.set_viewport_size({"width": 960, "height": 900})
    page.wait_for_function(
        "(before) => Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".every((gd, i) => gd._fullLayout.width < before[i] - 100 && gd.dataset.tablesFit === '1'"
        " && gd._tableFit.width === gd._fullLayout.width && !gd._tableFit.busy)",
        arg=widths,
        timeout=30_000,
    )
    page.wait_for_timeout(500)
    _assert_tables_fit(page.evaluate(MEASURE), spills=False)
    assert errors == []
    context.close()


def _assert_tables_fit(figures, *, spills: bool):
    tables = [table for figure in figures for table in figure["tables"]]
    assert {t["chart"] for t in tables} == {
        "participants",
        "query-counts",
        "attention",
        "statistics",
        "meta-evaluation",
    }
    assert next(t for t in tables if t["chart"] == "meta-evaluation")["rows"] == 21
    for table in tables:
        assert table["rendered"] == table["rows"] > 0, table  # every row drawn, none behind a scroll
        assert -1 <= table["belowArea"] < GAP_PX, table  # inside its area, no empty band under it
        if table["belowChart"] is not None:  # the table ends the figure: the chart ends with it
            assert 0 <= table["belowChart"] < GAP_PX, table
        # At 1280 px every column holds its widest word; narrower, a long word may still be clipped.
        assert not spills or table["spills"] == [], table
