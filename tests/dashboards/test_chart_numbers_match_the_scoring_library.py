"""The numbers behind every chart, computed here from
scoring/lib/session.py (and by hand) on the constructed study."""

import csv
import io

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats

from scoring.lib.session import SessionParams, session_grid
from scoring.lib.statistics import compare_systems

from .conftest import library_scores

pytestmark = pytest.mark.django_db


def _get(client, run, chart, fmt="json", **query):
    url = reverse(f"scoring:chart_{fmt}", args=[run.study.slug, run.pk, chart])
    response = client.get(url, query)
    assert response.status_code == 200, response.content[:500]
    if fmt == "csv":
        return list(csv.reader(io.StringIO(response.content.decode())))
    return response.json()


def _held(matrix_rows, width):
    out = np.zeros((len(matrix_rows), width))
    for row, values in zip(out, matrix_rows, strict=True):
        row[: len(values)] = values
        row[len(values) :] = values[-1]
    return out


@pytest.fixture
def logged_in(client, scored):
    built, run = scored
    client.force_login(built.study.owner)
    return client, built, run


def _trace(figure, name_start):
    return next(t for t in figure["data"] if t.get("name", "").startswith(name_start))


def test_figure_2_is_the_mean_normalized_curve_per_system_with_a_95_percent_band(logged_in):
    client, built, run = logged_in
    sessions, _, expected = library_scores(built)
    figure = _get(client, run, "curves")["figure"]
    width = expected.normalized.shape[1]  # the longest session: the batch pads to it too
    for system in ("A", "B"):
        rows = expected.normalized[[s["system"] == system for s in sessions]]
        trace = _trace(figure, f"{system} (n={len(rows)})")
        assert len(trace["y"]) == width == 10 * max(len(s["lists"]) for s in sessions)
        np.testing.assert_allclose(trace["y"], rows.mean(axis=0), atol=1e-6)
        half = stats.t.ppf(0.975, len(rows) - 1) * rows.std(axis=0, ddof=1) / np.sqrt(len(rows))
        bands = [t for t in figure["data"] if t.get("legendgroup") == system and not t.get("name")]
        np.testing.assert_allclose(bands[0]["y"], rows.mean(axis=0) + half, atol=1e-6)
        np.testing.assert_allclose(bands[1]["y"], rows.mean(axis=0) - half, atol=1e-6)
    assert figure["layout"]["xaxis"]["ticktext"][0] == "Q1"
    table = _get(client, run, "curves", "csv")
    assert table[0] == [
        "system",
        "position",
        "mean",
        "ci_low",
        "ci_high",
        "sessions",
        "population",
        "population_n",
        "averaged_over",
        "unjudged_sessions_left_out",
    ]
    assert {row[-2] for row in table[1:]} == {"sessions"} and {row[-1] for row in table[1:]} == {"0"}
    assert len(table) == 1 + 2 * width


def test_figure_3_is_a_scenarios_unnormalized_mean_and_the_same_for_sessions_of_at_least_k_queries(logged_in):
    client, built, run = logged_in
    sessions, _, expected = library_scores(
        built, sessions=[s for s in built.sessions if s["scenario"] == "S2"]
    )
    figure = _get(client, run, "scenario", scenario="S2", k=3)["figure"]
    assert "Scenario S2" in figure["layout"]["title"]["text"]
    for system in ("A", "B"):
        mine = np.array([s["system"] == system for s in sessions])
        long = mine & np.array([len(s["lists"]) >= 3 for s in sessions])
        trace = _trace(figure, f"{system}, all (n={mine.sum()})")
        np.testing.assert_allclose(trace["y"], expected.curve[mine].mean(axis=0), atol=1e-6)
        if long.any():
            trace = _trace(figure, f"{system}, >= 3 queries (n={long.sum()})")
            np.testing.assert_allclose(trace["y"], expected.curve[long].mean(axis=0), atol=1e-6)


def test_figure_4_draws_each_session_labelled_with_its_participant_and_stopping_point(logged_in):
    client, built, run = logged_in
    chosen = [s for s in built.sessions if s["scenario"] == "S1" and s["system"] == "B"]
    sessions, _, expected = library_scores(built, sessions=chosen)
    payload = _get(client, run, "sessions", scenario="S1", system_one="B")
    lines = [t for t in payload["figure"]["data"] if t["mode"] == "lines"]
    stops = [t for t in payload["figure"]["data"] if t["mode"] == "markers"]
    # Each stop is labelled by an annotation (fanned out where stops fall together).
    annotations = [(a["x"], a["y"], a["text"]) for a in payload["figure"]["layout"]["annotations"]]
    assert len(lines) == len(stops) == len(sessions) > 0
    labels = {"satisfied": "satisfied", "gave_up": "gave up", "timed_out": "timed out"}
    by_label = {t["name"]: t for t in lines}
    for s, session in enumerate(sessions):
        label = f"{session['participant']}: {labels[session['end']]} after Q{len(session['lists'])}"
        np.testing.assert_allclose(by_label[label]["y"], expected.curve[s], atol=1e-6)
        stop = next(t for t in stops if t["name"] == f"{label} (stop)")
        assert stop["x"] == [10 * len(session["lists"])]
        assert (stop["x"][0], stop["y"][0], session["participant"]) in annotations
        assert stop["y"][0] == pytest.approx(float(expected.final[s]), abs=1e-6)
    assert any("Stopping points" in note for note in payload["notes"])


def test_figure_1_compares_last_and_earlier_queries_and_the_best_by_rank_to_100(logged_in):
    client, built, run = logged_in
    sessions, _, expected = library_scores(built)
    figure = _get(client, run, "queries")["figure"]

    def by_rank(session, q):
        ranked = session["lists"][q - 1]
        gains = np.zeros(100)
        gains[: len(ranked)] = [(0, 1, 10, 100)[built.grades[session["topic"]].get(d, 0)] for d in ranked]
        return np.cumsum(gains / (1 + np.log2(np.arange(1, 101)))) / (1 + np.log(q) / np.log(4))

    for system in ("A", "B"):
        mine = [(i, s) for i, s in enumerate(sessions) if s["system"] == system]
        last = [by_rank(s, len(s["lists"])) for _, s in mine]
        # The unit is the session: a session's earlier queries are averaged first, then the sessions.
        earlier = [
            np.mean([by_rank(s, q) for q in range(1, len(s["lists"]))], axis=0)
            for _, s in mine
            if len(s["lists"]) > 1
        ]
        best = [by_rank(s, int(np.argmax(expected.per_query_of(i))) + 1) for i, s in mine]
        for name, vectors in (("LQ", last), ("Non-last Q", earlier), ("best Q", best)):
            trace = _trace(figure, f"{system} {name} (n={len(vectors)})")
            np.testing.assert_allclose(trace["y"], np.mean(vectors, axis=0), rtol=1e-5, atol=1e-6)
            assert trace["x"][-1] == 100


def test_table_1_gives_each_questionnaire_features_mean_and_sd(logged_in):
    client, built, run = logged_in
    answers = [p.questionnaire_answers for p in built.study.participants.all()]
    table = _get(client, run, "participants", "csv")
    rows = {row[0]: row for row in table[1:] if row[table[0].index("group")] == "all"}
    for key, label in (
        ("search_engine_years", "Experience using Internet search engines (years)"),
        ("domain_years", "Professional experience in the domain (years)"),
        ("search_skill", "Your searching skill (1 = low, 5 = high)"),
    ):
        values = np.array([a[key] for a in answers], dtype=float)
        assert float(rows[label][1]) == pytest.approx(values.mean())
        assert float(rows[label][2]) == pytest.approx(values.std(ddof=1))
        assert rows[label][3] == "8"
    assert _get(client, run, "participants")["figure"]["data"][0]["type"] == "table"


def test_table_2_counts_sessions_by_number_of_queries_per_system(logged_in):
    client, built, run = logged_in
    table = _get(client, run, "query-counts", "csv")
    longest = max(len(s["lists"]) for s in built.sessions)
    assert table[0] == [
        "system",
        "sessions",
        *[str(n) for n in range(1, longest + 1)],
        "mean_per_session",
        "population",
        "population_n",
        "averaged_over",
        "unjudged_sessions_left_out",
    ]
    for row in table[1:]:
        lengths = [len(s["lists"]) for s in built.sessions if s["system"] == row[0]]
        assert int(row[1]) == len(lengths) == 16
        assert [int(c) for c in row[2:-5]] == [lengths.count(n) for n in range(1, longest + 1)]
        assert float(row[-5]) == pytest.approx(np.mean(lengths))
        assert row[-4:-2] == ["itt:excluded", "32"]


@pytest.mark.parametrize("summary", ["final", "normalized_final", "last_query", "best_query", "average"])
def test_statistics_test_the_librarys_per_session_values(logged_in, summary):
    client, built, run = logged_in
    sessions, _, expected = library_scores(built)
    payload = _get(client, run, "statistics", summary=summary, unit="participant")
    values = getattr(expected, summary)
    boxes = {t["name"]: t["y"] for t in payload["figure"]["data"] if t["type"] == "box"}
    for system in ("A", "B"):  # each participant's mean on the system: every one used both systems
        means = [
            np.mean(
                [values[i] for i, s in enumerate(sessions) if s["system"] == system and s["participant"] == p]
            )
            for p in sorted({s["participant"] for s in sessions})
        ]
        assert sorted(boxes[system]) == pytest.approx(sorted(means), abs=1e-6)
    result = compare_systems(values, [s["system"] for s in sessions], [s["participant"] for s in sessions])
    table = _get(client, run, "statistics", "csv", summary=summary, unit="participant")
    paired = next(r for r in table if r[0] == "paired t-test (participant means)")
    expected_t = next(t for t in result.tests if t.test == "paired t-test (participant means)")
    assert float(paired[4]) == pytest.approx(expected_t.p_value)
    assert any("bootstrap CI" in note for note in payload["notes"])


def test_the_sensitivity_heatmap_is_the_difference_of_system_means_over_the_grid(logged_in):
    client, built, run = logged_in
    sessions, batch, _ = library_scores(built, curves=False)
    grid = session_grid(batch, SessionParams(), b_values=run.grid_b, bq_values=run.grid_bq)
    systems = np.array([s["system"] for s in sessions])
    figure = _get(client, run, "sensitivity", summary="final")["figure"]
    heat = figure["data"][0]
    expected = grid.final[:, :, systems == "B"].mean(axis=2) - grid.final[:, :, systems == "A"].mean(axis=2)
    np.testing.assert_allclose(heat["z"], expected, rtol=1e-5)
    assert heat["y"] == [f"{b:g}" for b in run.grid_b] and heat["x"] == [f"{bq:g}" for bq in run.grid_bq]
    mark = figure["layout"]["annotations"][0]
    assert (mark["text"], mark["x"], mark["y"]) == ("this run", run.grid_bq.index(4.0), run.grid_b.index(2.0))


def test_filters_narrow_every_chart(logged_in):
    client, built, run = logged_in
    figure = _get(client, run, "curves", system="A", min_queries=3)["figure"]
    names = [t["name"] for t in figure["data"] if t.get("name")]
    n = sum(1 for s in built.sessions if s["system"] == "A" and len(s["lists"]) >= 3)
    assert names == [f"A (n={n})"]
    one = built.sessions[0]["participant"]
    table = _get(client, run, "query-counts", "csv", participant=one)
    assert sum(int(r[1]) for r in table[1:]) == 4
