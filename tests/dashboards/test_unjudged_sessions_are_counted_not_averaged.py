"""Sessions on a scenario without any reference judgment are marked unjudged, left out of every mean and test
by default (unjudged=include counts them), and every chart, table and CSV says how many were left out."""

import csv
import io

import numpy as np
import pytest
from django.urls import reverse

from scoring import services
from scoring.dashboards.registry import CHARTS
from scoring.models import SessionScore

from .conftest import library_scores, reference_version

pytestmark = pytest.mark.django_db


@pytest.fixture
def s4_unjudged(constructed, collection_docs, django_capture_on_commit_callbacks):
    """Reference v2 judges topics 1-3 only: the 8 sessions of
    scenario S4 (topic 4) have nothing to score against."""
    grades = {topic: judged for topic, judged in constructed.grades.items() if topic != "4"}
    reference_version(constructed.study, grades, docs=collection_docs)
    with django_capture_on_commit_callbacks(execute=True):
        run = services.scoring_run_create(study=constructed.study)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return constructed, run


def _get(client, run, chart, fmt="json", **query):
    response = client.get(reverse(f"scoring:chart_{fmt}", args=[run.study.slug, run.pk, chart]), query)
    assert response.status_code == 200, response.content[:500]
    return list(csv.reader(io.StringIO(response.content.decode()))) if fmt == "csv" else response.json()


def test_sessions_on_a_scenario_without_judgments_are_marked_unjudged(s4_unjudged):
    built, run = s4_unjudged
    marked = SessionScore.objects.filter(run=run, unjudged=True)
    assert sorted(marked.values_list("scenario__code", flat=True)) == ["S4"] * 8
    assert SessionScore.objects.filter(run=run, unjudged=False).count() == 24


def test_every_chart_leaves_them_out_and_says_how_many(client, s4_unjudged):
    built, run = s4_unjudged
    client.force_login(built.study.owner)
    for chart in CHARTS:
        payload = _get(client, run, chart)
        table = _get(client, run, chart, "csv")
        if chart == "participants":
            assert any("no session is left out" in note for note in payload["notes"])
            continue
        assert any(
            "8 sessions on scenarios without any judgment (S4) left out" in n for n in payload["notes"]
        ), chart
        assert "8 unjudged sessions left out" in payload["figure"]["layout"]["title"]["text"], chart
        assert table[0][-1] == "unjudged_sessions_left_out" and {row[-1] for row in table[1:]} <= {"8"}, chart

    judged = [s for s in built.sessions if s["scenario"] != "S4"]
    grades = {t: g for t, g in built.grades.items() if t != "4"}
    figure = _get(client, run, "curves")["figure"]
    for system in ("A", "B"):
        n = sum(s["system"] == system for s in judged)
        assert any(t.get("name") == f"{system} (n={n})" for t in figure["data"])
    # The statistics' session means are the library's over the judged sessions only.
    built.grades = grades
    sessions, _, expected = library_scores(built, sessions=judged)
    notes = _get(client, run, "statistics", summary="final")["notes"]
    systems = np.array([s["system"] for s in sessions])
    mean_a = expected.final[systems == "A"].mean()
    assert any(f"A {mean_a:.4g} (n={int((systems == 'A').sum())})" in note for note in notes)


def test_include_counts_them_and_the_page_says_so(client, s4_unjudged):
    built, run = s4_unjudged
    client.force_login(built.study.owner)
    figure = _get(client, run, "curves", unjudged="include")["figure"]
    assert {t["name"] for t in figure["data"] if t.get("name")} == {"A (n=16)", "B (n=16)"}
    assert "0 unjudged sessions left out" in figure["layout"]["title"]["text"]
    page = client.get(reverse("scoring:run_detail", args=[built.study.slug, run.pk])).content.decode()
    assert "<strong>8 sessions</strong> on scenarios without any judgment (S4) are left out" in page


def test_the_api_says_which_sessions_are_unjudged(client, s4_unjudged):
    built, run = s4_unjudged
    client.force_login(built.study.owner)
    url = f"/api/studies/{built.study.pk}/scoring-runs/{run.pk}/sessions/"
    rows = client.get(url, {"unjudged": "true", "page_size": 100}).json()["results"]
    assert len(rows) == 8 and {row["scenario"] for row in rows} == {"S4"}


def test_the_comparison_page_says_what_each_run_left_out(
    client, s4_unjudged, django_capture_on_commit_callbacks
):
    built, run = s4_unjudged
    client.force_login(built.study.owner)
    with django_capture_on_commit_callbacks(execute=True):
        other = services.scoring_run_create(study=built.study, b=10.0)
    url = reverse("scoring:compare", args=[built.study.slug])
    page = client.get(url, {"left": run.pk, "right": other.pk}).content.decode()
    assert page.count("8 sessions on scenarios without any judgment (S4) left out") == 2
    assert client.get(url, {"left": run.pk, "right": other.pk, "scenario": "S9"}).status_code == 400
