"""A withdrawal reaches every run: older runs, never re-scored since, once kept and charted the
withdrawn participant's sessions (4 session scores each, their Figure 4 lines named with their code) though
their per-query rows were gone. Now every run of the study, default or not, holds none of their sessions at
once, no chart of any run names their code (cached charts included), each run shows what a fresh run with
its parameters shows, and the audit row says what went."""

import json

import pytest
from django.urls import reverse

from scoring import services
from scoring.dashboards.registry import CHARTS
from scoring.freshness import run_freshness
from scoring.models import QueryScore, SessionScore
from studies.models import AuditEntry
from studies.participation.way.steps import participant_withdraw

pytestmark = pytest.mark.django_db

OLDER = [{"b": 3.0}, {"top": 5, "formulation": "2008"}]


def _chart(client, run, chart, **query):
    response = client.get(reverse("scoring:chart_json", args=[run.study.slug, run.pk, chart]), query)
    assert response.status_code == 200, response.content[:300]
    return response.json()


@pytest.fixture
def runs(scored, django_capture_on_commit_callbacks):
    """The default run and two older runs with other parameters, all done."""
    built, default = scored
    older = []
    for options in OLDER:
        with django_capture_on_commit_callbacks(execute=True):
            run = services.scoring_run_create(study=built.study, make_default=False, **options)
        run.refresh_from_db()
        assert run.status == "done", run.error
        older.append(run)
    return built, [default, *older]


def _figure_4(built, code):
    """Figure 4 on the scenario and system of the participant's first session, so their line is drawn."""
    record = next(s for s in built.sessions if s["participant"] == code)
    return {"scenario": record["scenario"], "system_one": record["system"]}


def test_every_run_and_chart_loses_the_participant_at_once(client, runs, django_capture_on_commit_callbacks):
    built, all_runs = runs
    client.force_login(built.study.owner)
    code = built.sessions[0]["participant"]
    participant = built.study.participants.get(code=code)
    for run in all_runs:  # drawn and cached before: their code is on Figure 4 of every run
        assert run.session_scores.filter(participant=participant).count() == 4
        assert code in json.dumps(_chart(client, run, "sessions", **_figure_4(built, code)))
    with django_capture_on_commit_callbacks(
        execute=False
    ):  # no re-score runs: the rows go in the transaction
        participant_withdraw(participant=participant, by="researcher")
    session_ids = [s["id"] for s in built.sessions if s["participant"] == code]
    assert not SessionScore.objects.filter(session_id__in=session_ids).exists()
    assert not QueryScore.objects.filter(session_id__in=session_ids).exists()
    for run in all_runs:
        assert run.session_scores.count() == 28
        assert run_freshness(run).current, run_freshness(run).reasons  # nothing owed: no re-score needed
        for chart in CHARTS:
            query = _figure_4(built, code) if chart == "sessions" else {}
            assert code not in json.dumps(_chart(client, run, chart, **query)), (run.pk, chart)
    entry = AuditEntry.objects.get(action="participant_withdrawn", participant_code=code)
    assert entry.detail["deleted"]["sessions"] == 4
    assert entry.detail["scores"] == {
        "runs": sorted(run.pk for run in all_runs),
        "session_scores": 12,
        "power_plans": [],
    }


@pytest.mark.parametrize("index", range(len(OLDER) + 1))
def test_each_run_shows_what_a_fresh_run_shows(client, runs, django_capture_on_commit_callbacks, index):
    built, all_runs = runs
    client.force_login(built.study.owner)
    code = built.sessions[0]["participant"]
    run = all_runs[index]
    _chart(client, run, "statistics")  # cached before the withdrawal
    with django_capture_on_commit_callbacks(execute=True):
        participant_withdraw(participant=built.study.participants.get(code=code))
    options = {"b": run.b, "top": run.top, "formulation": run.formulation}
    with django_capture_on_commit_callbacks(execute=True):
        fresh = services.scoring_run_create(study=built.study, make_default=False, **options)
    fresh.refresh_from_db()
    assert fresh.session_scores.count() == 28
    for chart in ("statistics", "curves", "sensitivity", "query-counts"):
        shown, expected = _chart(client, run, chart), _chart(client, fresh, chart)
        assert shown["figure"]["data"] == expected["figure"]["data"], chart
        assert shown["notes"] == expected["notes"], chart  # n = 28 sessions of 7 participants
        assert "n = 28 sessions of 7 participants" in shown["notes"][0]
        table = client.get(reverse("scoring:chart_csv", args=[built.study.slug, run.pk, chart])).content
        assert (
            table
            == client.get(reverse("scoring:chart_csv", args=[built.study.slug, fresh.pk, chart])).content
        )
