"""Pages show confidence intervals rounded (three significant digits in the statistics table, three
decimals in the curves' hover), while the CSV keeps every digit of the same interval, and the JSON the
figure's values."""

import csv
import io
import re

import pytest
from django.urls import reverse

from scoring.dashboards.charts.common import interval_exported, interval_shown

pytestmark = pytest.mark.django_db


@pytest.fixture
def logged_in(client, scored):
    built, run = scored
    client.force_login(built.study.owner)
    return client, run


def _chart(client, run, name, fmt, **query):
    response = client.get(reverse(f"scoring:chart_{fmt}", args=[run.study.slug, run.pk, name]), query)
    assert response.status_code == 200, response.content[:300]
    return response


def test_an_interval_is_rounded_to_show_and_whole_to_export():
    assert interval_shown(0.0123456789, -0.98765432) == "[0.0123, -0.988]"
    assert interval_shown(float("nan"), 1.0) == interval_shown(None, 1.0) == ""
    assert interval_exported(0.0123456789012345, -0.98765432) == "[0.0123456789012345, -0.98765432]"


def test_the_statistics_table_rounds_the_intervals_the_csv_keeps_whole(logged_in):
    client, run = logged_in
    figure = _chart(client, run, "statistics", "json", summary="final").json()["figure"]
    [table] = [trace for trace in figure["data"] if trace["type"] == "table"]
    tests, _, _, shown = table["cells"]["values"][:4]
    rows = list(csv.reader(io.StringIO(_chart(client, run, "statistics", "csv", summary="final").text)))
    exported = {(row[0], row[1]): row[3] for row in rows[1:]}
    intervals = [(name, cell) for name, cell in zip(tests, shown, strict=True) if cell.startswith("[")]
    assert intervals, "the bootstrap differences show an interval"
    for name, cell in intervals:
        for bound in re.findall(r"-?[\d.e+-]+", cell):
            assert len(bound.lstrip("-").replace(".", "").lstrip("0")) <= 3, (name, cell)
    bootstrap = next(key for key in exported if key[0].startswith("mean difference, bootstrap"))
    low, high = (float(b) for b in exported[bootstrap].strip("[]").split(","))
    assert exported[bootstrap] == interval_exported(low, high)  # every digit, as Python reads it back
    assert interval_shown(low, high) in shown


def test_the_curves_hover_rounds_the_mean_and_its_band(logged_in):
    client, run = logged_in
    figure = _chart(client, run, "curves", "json").json()["figure"]
    means = [trace for trace in figure["data"] if trace.get("name")]
    assert means
    for trace in means:
        assert "%{y:.3f} (95% CI %{customdata[0]:.3f} to %{customdata[1]:.3f})" in trace["hovertemplate"]
        assert len(trace["customdata"]) == len(trace["y"])


def test_the_power_curve_s_hover_rounds_its_monte_carlo_interval():
    from scoring.lib.power import power_point
    from scoring.planning.charts import _power_traces
    from scoring.planning.selectors import PlanCurve

    point = power_point(12, 7, 9)  # 7 rejections of 9 replications at 12 participants
    [trace] = _power_traces(PlanCurve(points=[point]))
    assert trace["hovertemplate"] == (
        "n %{x}: power %{y:.2f} (95% interval %{customdata[0]:.2f} to %{customdata[1]:.2f})<extra></extra>"
    )
    assert trace["customdata"] == [[point.low, point.high]]  # the JSON keeps the bounds whole
