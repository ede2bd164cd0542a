"""Every chart and test of a dashboard averages over one unit, named on it (sessions by default; participants
or scenarios on request), so the statistics card and the (b, bq) heatmap cannot disagree because they averaged
different things. Filters take the codes the pages show; a value naming nothing in the study is a 400."""

import csv
import io

import numpy as np
import pytest
from django.urls import reverse

from scoring import services
from scoring.dashboards.registry import CHARTS
from scoring.models import SessionScore

from .conftest import build_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def unbalanced(designed_study, collection_docs, django_capture_on_commit_callbacks):
    """Some participants miss one of their sessions on A: a participant's mean is then not a session mean."""
    skip = {(f"P{n:03d}", position) for n, position in ((1, 1), (2, 1), (3, 2), (4, 1))}
    built = build_study(designed_study, collection_docs, skip=skip)
    with django_capture_on_commit_callbacks(execute=True):
        run = services.scoring_run_create(study=built.study)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return built, run


def _json(client, run, chart, **query):
    response = client.get(reverse("scoring:chart_json", args=[run.study.slug, run.pk, chart]), query)
    assert response.status_code == 200, response.content[:500]
    return response.json()


def _cell(payload, run):
    """The heatmap's value at the run's own (b, bq)."""
    return payload["figure"]["data"][0]["z"][run.grid_b.index(run.b)][run.grid_bq.index(run.bq)]


def _difference(client, run, **query):
    """The statistics card's mean difference B minus A: its bootstrap row in the CSV download."""
    url = reverse("scoring:chart_csv", args=[run.study.slug, run.pk, "statistics"])
    rows = list(csv.reader(io.StringIO(client.get(url, query).content.decode())))
    row = next(r for r in rows if r[0].startswith("mean difference, bootstrap") and r[1] == "A vs B")
    return float(row[2])


@pytest.mark.parametrize("unit", ["session", "participant", "scenario"])
def test_the_statistics_card_and_the_heatmap_agree_on_every_unit(client, unbalanced, unit):
    built, run = unbalanced
    client.force_login(built.study.owner)
    query = {"summary": "final"} if unit == "session" else {"summary": "final", "unit": unit}
    statistics = _json(client, run, "statistics", **query)
    heatmap = _json(client, run, "sensitivity", first="A", second="B", **query)
    assert _cell(heatmap, run) == pytest.approx(_difference(client, run, **query), rel=1e-5)
    words = {"session": "sessions", "participant": "participants", "scenario": "scenarios"}[unit]
    assert (
        f"Averaged over: {words}." in statistics["notes"] and f"Averaged over: {words}." in heatmap["notes"]
    )
    assert f"over {words}" in heatmap["figure"]["layout"]["title"]["text"]


def test_the_default_unit_is_the_session_everywhere(client, unbalanced):
    built, run = unbalanced
    client.force_login(built.study.owner)
    rows = SessionScore.objects.filter(run=run)
    mean = {code: np.mean([r.final for r in rows if r.system.code == code]) for code in ("A", "B")}
    statistics = _json(client, run, "statistics", summary="final")
    assert _difference(client, run, summary="final") == pytest.approx(mean["B"] - mean["A"], rel=1e-9)
    # A within-subject study's card leads with the design's own test on participant means (issue 42, named
    # as such); the card's own tests follow on the page's unit.
    names = [t for t in statistics["figure"]["data"] if t["type"] == "table"][0]["cells"]["values"][0]
    assert [n.endswith("(within-subject design)") for n in names[:4]] == [True, True, True, False]
    assert names[3] == "one-way ANOVA (sessions)"
    for chart in CHARTS:
        notes = _json(client, run, chart)["notes"]
        expected = {
            "sessions": "individual sessions (no average)",
            "participants": "participants (not scores)",
        }
        assert f"Averaged over: {expected.get(chart, 'sessions')}." in notes, chart
    # The participants' unit pairs: the paired tests name it.
    paired = _json(client, run, "statistics", summary="final", unit="participant")
    names = [t for t in paired["figure"]["data"] if t["type"] == "table"][0]["cells"]["values"][0]
    assert "paired t-test (participant means)" in names and "one-way ANOVA (sessions)" not in names


def test_filters_take_codes(client, unbalanced):
    built, run = unbalanced
    client.force_login(built.study.owner)
    one = built.sessions[5]
    figure = _json(
        client, run, "curves", system="A", scenario=one["scenario"], participant=one["participant"]
    )
    names = [t["name"] for t in figure["figure"]["data"] if t.get("name")]
    expected = [
        s
        for s in built.sessions
        if s["id"]
        and s["system"] == "A"
        and s["scenario"] == one["scenario"]
        and s["participant"] == one["participant"]
    ]
    assert names == ([f"A (n={len(expected)})"] if expected else [])


@pytest.mark.parametrize(
    "query",
    [
        {"system": "Z"},
        {"system": "1"},  # a database id is not a code
        {"scenario": "S9"},
        {"participant": "P999"},
        {"min_queries": "three"},
        {"min_queries": "0"},
        {"unit": "week"},
        {"unjudged": "maybe"},
        {"summary": "everything"},
        {"k": "x"},
        {"system_one": "Z"},
        {"first": "Z"},
    ],
)
def test_an_unknown_filter_value_is_a_400_not_the_whole_study(client, unbalanced, query):
    built, run = unbalanced
    client.force_login(built.study.owner)
    for chart in ("curves", "sessions", "sensitivity", "scenario"):
        for fmt in ("json", "csv"):
            url = reverse(f"scoring:chart_{fmt}", args=[built.study.slug, run.pk, chart])
            response = client.get(url, query)
            if set(query) & {"k", "system_one", "first"} and chart not in (
                "scenario",
                "sessions",
                "sensitivity",
            ):
                continue  # an option of another chart
            if "k" in query and chart != "scenario" or "system_one" in query and chart != "sessions":
                continue
            if "first" in query and chart != "sensitivity":
                continue
            assert response.status_code == 400, (chart, fmt, query)
            if fmt == "json":
                assert "error" in response.json()
    if not set(query) & {"k", "system_one", "first", "summary"}:
        page = client.get(reverse("scoring:run_detail", args=[built.study.slug, run.pk]), query)
        assert page.status_code == 400 and b"Bad filter" in page.content


def test_the_api_refuses_an_unknown_code(client, unbalanced):
    built, run = unbalanced
    client.force_login(built.study.owner)
    url = f"/api/studies/{built.study.pk}/scoring-runs/{run.pk}/sessions/"
    assert client.get(url, {"system": "A"}).status_code == 200
    response = client.get(url, {"system": "Z"})
    assert response.status_code == 400 and "system" in response.json()
    assert client.get(url, {"end_reason": "bored"}).status_code == 400
    runs = f"/api/studies/{built.study.pk}/scoring-runs/"
    assert client.get(runs, {"status": "done"}).json()["count"] == 1
    for query in ({"status": "finished"}, {"judgments": "experts"}):
        response = client.get(runs, query)
        assert response.status_code == 400 and set(query) <= set(response.json()), query
