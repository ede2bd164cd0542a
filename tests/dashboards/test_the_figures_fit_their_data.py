"""The dashboards as a review found them, mended: Figure 1 opens on the ranks where its curves still change
(not always to rank 100); Figure 4 gives 15 and more sessions distinct styles and fans out stop labels that
fall together; Tables 1 and 2 are as tall as their rows;
the legends name the systems, not only their codes."""

from dataclasses import dataclass

import numpy as np
import pytest
from django.urls import reverse

from scoring.dashboards import charts

pytestmark = pytest.mark.django_db


def _get(client, run, chart, **query):
    response = client.get(reverse("scoring:chart_json", args=[run.study.slug, run.pk, chart]), query)
    assert response.status_code == 200, response.content[:300]
    return response.json()


@pytest.fixture
def logged_in(client, scored):
    built, run = scored
    client.force_login(built.study.owner)
    return client, built, run


def test_figure_1_is_drawn_to_where_its_curves_are_flat():
    rising_to_12 = np.minimum(np.arange(1, 101), 12).astype(float)
    assert charts.flat_after([rising_to_12]) == 15  # flat from 12: two ranks more, a multiple of 5
    assert charts.flat_after([np.minimum(np.arange(1, 101), 3).astype(float)]) == 10  # never fewer than 10
    assert charts.flat_after([np.arange(1, 101, dtype=float)]) == 100  # still rising at 100: all of it
    assert charts.flat_after([np.zeros(100), rising_to_12]) == 15  # a curve of zeros does not widen it
    assert charts.flat_after([]) == 0


def test_figure_1_endpoint_opens_on_the_ranks_that_change_and_says_so(logged_in):
    client, _built, run = logged_in
    payload = _get(client, run, "queries")
    low, high = payload["figure"]["layout"]["xaxis"]["range"]
    assert low == 0.5 and high < 100  # the constructed lists are at most 14 long: flat well before 100
    assert len(payload["figure"]["data"][0]["x"]) == 100  # the data keeps every rank (autoscale, CSV)
    assert any(note.startswith("Ranks 1-") and "all 100 ranks" in note for note in payload["notes"])


@dataclass
class FewScores:
    """What sessions_chart reads of a run's scores, for sessions made up here."""

    curves: list
    participant: list
    end_reason: list
    session_id: np.ndarray
    n_queries: np.ndarray
    length: np.ndarray

    def __len__(self):
        return len(self.curves)


def _crowded(n: int) -> FewScores:
    """n sessions that found nothing and gave up after one query: every stop at (10, 0), as in the issue."""
    return FewScores(
        curves=[np.zeros(10) for _ in range(n)],
        participant=[f"P{i:03d}" for i in range(1, n + 1)],
        end_reason=["gave_up"] * n,
        session_id=np.arange(1, n + 1),
        n_queries=np.ones(n, dtype=int),
        length=np.full(n, 10),
    )


def test_figure_4_gives_every_session_its_own_style_and_fans_out_crowded_labels():
    for n in (15, 25):
        chart = charts.sessions_chart(
            _crowded(n), scenario="S1", system="A", top=10, fixed=True, names={"A": "Title and text"}
        )
        lines = [t for t in chart.figure["data"] if t["mode"] == "lines"]
        styles = {(t["line"]["color"], t["line"]["dash"]) for t in lines}
        assert len(styles) == n
        labels = chart.figure["layout"]["annotations"]
        assert sorted(a["text"] for a in labels) == [f"P{i:03d}" for i in range(1, n + 1)]
        assert {(a["x"], a["y"]) for a in labels} == {(10, 0.0)}  # all point at the one stop...
        assert len({(a["ax"], a["ay"]) for a in labels}) == n  # ...from n different places
        rise = max(-a["ay"] for a in labels)
        assert chart.figure["layout"]["margin"]["t"] >= rise  # room above for the highest
        assert "A: Title and text" in chart.figure["layout"]["title"]["text"]
    # Stops far apart keep the first place: nothing is moved that need not be.
    assert (
        charts.stop_label_offsets([(1, 0.0), (50, 10.0), (100, 20.0)], width=100, ymax=20) == [(-18, -14)] * 3
    )


def test_the_first_twenty_session_colours_are_distinct_to_the_eye():
    colours = [charts.session_style(i)[0] for i in range(20)]
    assert len(set(colours)) == 20
    rgb = np.array([[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in colours], dtype=float)
    distances = np.sqrt(((rgb[:, None, :] - rgb[None, :, :]) ** 2).sum(axis=2))
    assert distances[np.triu_indices(20, 1)].min() > 40
    assert len({charts.session_style(i) for i in range(80)}) == 80


def test_tables_are_as_tall_as_their_rows():
    header = ["Participant", "n", "Agreement"]
    four = charts.table_height(header, [["P1", 3, "50%"]] * 4)
    thirty_two = charts.table_height(header, [["P1", 3, "50%"]] * 32)
    assert thirty_two - four == 28 * (charts.TABLE_PAD_PX + charts.TABLE_LINE_PX)
    # A label that wraps makes its row taller, and the table with it.
    wrapped = charts.table_height(header, [["a long feature label " * 8, 3, "50%"]] + [["P1", 3, "50%"]] * 3)
    assert wrapped > four
    long_item = {
        "name": "years",
        "kind": "integer",
        "label": "How many years have you searched the web? " * 4,
    }
    table = charts.participants_table([{"years": 3}, {"years": 5}], [long_item])
    assert table.figure["layout"]["height"] == charts.table_height(
        ["Feature", "All (N = 2)"], [[long_item["label"], "4.0 ± 1.4 (n = 2)"]], [4, 1.6]
    )


def test_legends_and_table_2_name_the_systems(logged_in):
    client, _built, run = logged_in
    for chart in ("curves", "scenario"):
        data = _get(client, run, chart)["figure"]["data"]
        titles = {t["legendgrouptitle"]["text"] for t in data if t.get("legendgrouptitle")}
        assert titles == {"A: System A", "B: System B"}, chart
    table = _get(client, run, "query-counts")["figure"]["data"][0]
    assert table["cells"]["values"][0] == ["A: System A", "B: System B"]
    assert table["header"]["values"][2] == "1 query"
    assert (
        "on B: System B" in _get(client, run, "sessions", system_one="B")["figure"]["layout"]["title"]["text"]
    )
