"""Scoring runs over the API (scoring/api.py): create (scoring_run_create, scored on commit), list, read the
stored results, make default; other teams get 404, anonymous callers nothing; bad parameters are 400s naming
the field; list queries do not grow with the rows."""

import datetime as dt

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from scoring.models import QueryScore, ScoringRun, SessionScore
from studies.assessment import references
from studies.models import Query, SearchSession, ShownResult

from .api_helpers import client_for

pytestmark = pytest.mark.django_db

PARAMETERS = {
    "label": "paper",
    "weights": [0, 1, 10, 100],
    "b": 2,
    "bq": 4,
    "top": 10,
    "formulation": "2008",
    "gain": "linear",
    "duplicates": "every",
    "short_lists": "pad",
    "scan": "fixed",
    "judgments": "reference",
}


@pytest.fixture
def judged_study(worked_study, alice):
    """The worked study with a reference version grading every document for every topic."""
    lines = [f"{topic} 0 d{n} {(n + topic) % 4}" for topic in range(1, 5) for n in range(1, 9)]
    references.reference_version_import_qrels(
        study=worked_study, lines=lines, path="ref.qrels", created_by=alice, note="v1"
    )
    return worked_study


def runs_url(study, suffix=""):
    return f"/api/studies/{study.pk}/scoring-runs/{suffix}"


def create_run(client, study, data, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(runs_url(study), data, format="json")
    return response


def end_more_sessions(study):
    """P002 works every assignment: ended sessions of three queries each, more rows of every kind."""
    participant = study.participants.get(code="P002")
    documents = list(study.collection.documents.order_by("external_id"))
    now = timezone.now()
    for assignment in participant.assignments.all():
        session = SearchSession.objects.create(
            assignment=assignment,
            started_at=now,
            ended_at=now + dt.timedelta(minutes=3),
            end_reason="gave_up",
        )
        for position in (1, 2, 3):
            query = Query.objects.create(
                session=session,
                position=position,
                text=f"more {position}",
                issued_at=now + dt.timedelta(seconds=position),
            )
            ShownResult.objects.bulk_create(
                ShownResult(query=query, rank=r, document=documents[(r + position) % 8], shown_at=now)
                for r in range(1, 6)
            )


def test_a_researcher_creates_a_run_and_reads_it(judged_study, alice, django_capture_on_commit_callbacks):
    client = client_for(alice)
    response = create_run(
        client, judged_study, {**PARAMETERS, "make_default": True}, django_capture_on_commit_callbacks
    )
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["status"] == "pending"  # answered before the commit queued the scoring
    run = ScoringRun.objects.get(pk=created["id"])
    assert run.created_by == alice and run.study == judged_study
    assert (run.weights, run.b, run.bq, run.top, run.label) == ([0, 1, 10, 100], 2.0, 4.0, 10, "paper")

    detail = client.get(runs_url(judged_study, f"{run.pk}/")).json()
    assert detail["status"] == "done"
    assert detail["progress_done"] == detail["progress_total"] == 2
    assert detail["reference_version_number"] == 1
    assert detail["is_default"] is True and detail["stale"] is False
    assert detail["created_by"] == "alice"
    for name, value in PARAMETERS.items():
        assert detail[name] == value, name

    listed = client.get(runs_url(judged_study)).json()
    assert listed["count"] == 1 and listed["results"][0]["id"] == run.pk
    assert client.get(runs_url(judged_study), {"status": "done"}).json()["count"] == 1
    assert client.get(runs_url(judged_study), {"status": "failed"}).json()["count"] == 0
    assert client.get(runs_url(judged_study), {"is_default": "false"}).json()["count"] == 0
    assert client.get(runs_url(judged_study), {"is_default": "maybe"}).status_code == 400


def test_session_results_are_the_stored_scores(judged_study, alice, django_capture_on_commit_callbacks):
    client = client_for(alice)
    run_id = create_run(client, judged_study, PARAMETERS, django_capture_on_commit_callbacks).json()["id"]
    stored = {
        s.session_id: s
        for s in SessionScore.objects.filter(run_id=run_id).select_related(
            "participant", "scenario", "system"
        )
    }
    assert len(stored) == 2

    page = client.get(runs_url(judged_study, f"{run_id}/sessions/")).json()
    assert page["count"] == 2
    assert "curve" not in page["results"][0]
    rows = client.get(runs_url(judged_study, f"{run_id}/sessions/"), {"curves": "1"}).json()["results"]
    assert [row["session"] for row in rows] == sorted(stored)
    for row in rows:
        score = stored[row["session"]]
        assert row["participant"] == "P001" == score.participant.code
        assert (row["scenario"], row["system"]) == (score.scenario.code, score.system.code)
        assert (row["n_queries"], row["end_reason"], row["length"]) == (2, "satisfied", score.length)
        for name in ("final", "ideal_final", "normalized_final", "last_query", "best_query", "average"):
            assert row[name] == getattr(score, name), name
        curve = score.curve_array()
        ideal = np.frombuffer(bytes(score.ideal), dtype=np.float64)
        assert row["curve"] == curve.tolist() and row["ideal"] == ideal.tolist()
        assert len(row["curve"]) == score.length
        assert row["normalized"] == pytest.approx(
            np.where(ideal > 0, curve / np.where(ideal > 0, ideal, 1), 0)
        )
        assert row["final"] == pytest.approx(row["curve"][-1]) and row["final"] > 0

    # Filters and paging.
    url = runs_url(judged_study, f"{run_id}/sessions/")
    system = stored[rows[0]["session"]].system.code
    by_system = client.get(url, {"system": system}).json()
    assert by_system["count"] == sum(s.system.code == system for s in stored.values())
    assert client.get(url, {"participant": "P002"}).json()["count"] == 0
    assert client.get(url, {"min_queries": 2}).json()["count"] == 2
    assert client.get(url, {"min_queries": 3}).json()["count"] == 0
    assert (
        client.get(url, {"scenario": rows[0]["scenario"]}).json()["results"][0]["session"]
        == rows[0]["session"]
    )
    bad = client.get(url, {"min_queries": "many"})
    assert bad.status_code == 400 and "min_queries" in bad.json()
    first = client.get(url, {"page_size": 1}).json()
    assert len(first["results"]) == 1 and first["next"] is not None


def test_per_query_results_are_the_stored_scores(
    judged_study, alice, charlie, django_capture_on_commit_callbacks
):
    client = client_for(alice)
    run_id = create_run(client, judged_study, PARAMETERS, django_capture_on_commit_callbacks).json()["id"]
    session_id = SessionScore.objects.filter(run_id=run_id).order_by("session_id").first().session_id
    url = runs_url(judged_study, f"{run_id}/sessions/{session_id}/queries/")
    rows = client.get(url).json()["results"]
    stored = list(QueryScore.objects.filter(run_id=run_id, session_id=session_id).order_by("position"))
    assert [r["position"] for r in rows] == [1, 2]
    assert [r["sdcg"] for r in rows] == [q.sdcg for q in stored]
    assert [r["is_last"] for r in rows] == [False, True]
    assert [r["query"] for r in rows] == [q.query_id for q in stored]
    assert rows[0]["text"] == Query.objects.get(pk=stored[0].query_id).text
    assert "by_rank" not in rows[0]
    with_ranks = client.get(url, {"by_rank": "true"}).json()["results"]
    assert with_ranks[1]["by_rank"] == np.frombuffer(bytes(stored[1].by_rank), dtype=np.float32).tolist()
    assert len(with_ranks[1]["by_rank"]) == 100
    assert client.get(url, {"is_last": "true"}).json()["count"] == 1
    # A session of another study is a 404, as is one that does not exist.
    from studies.design import services

    other = services.study_create(owner=charlie, name="Charlie's")
    assert client.get(runs_url(judged_study, f"{run_id}/sessions/999999/queries/")).status_code == 404
    assert (
        client.get(
            f"/api/studies/{other.pk}/scoring-runs/{run_id}/sessions/{session_id}/queries/"
        ).status_code
        == 404
    )


def test_make_default(judged_study, alice, bob, django_capture_on_commit_callbacks):
    client = client_for(bob)  # a co-researcher may
    first = create_run(client, judged_study, PARAMETERS, django_capture_on_commit_callbacks).json()
    assert first["is_default"] is True  # the study's first run
    second = create_run(
        client, judged_study, {"b": 10, "bq": 10, "make_default": False}, django_capture_on_commit_callbacks
    ).json()
    assert second["is_default"] is False and second["weights"] == [0.0, 1.0, 10.0, 100.0]
    response = client.post(runs_url(judged_study, f"{second['id']}/make-default/"))
    assert response.status_code == 200 and response.json()["is_default"] is True
    assert list(
        ScoringRun.objects.filter(study=judged_study, is_default=True).values_list("pk", flat=True)
    ) == [second["id"]]
    assert (
        client.get(runs_url(judged_study), {"is_default": "true"}).json()["results"][0]["id"] == second["id"]
    )


def test_other_researchers_get_404_and_anonymous_callers_nothing(
    judged_study, alice, charlie, django_capture_on_commit_callbacks
):
    run_id = create_run(
        client_for(alice), judged_study, PARAMETERS, django_capture_on_commit_callbacks
    ).json()["id"]
    session_id = SessionScore.objects.filter(run_id=run_id).first().session_id
    paths = ["", f"{run_id}/", f"{run_id}/sessions/", f"{run_id}/sessions/{session_id}/queries/"]
    outsider, anonymous = client_for(charlie), client_for()
    for suffix in paths:
        assert outsider.get(runs_url(judged_study, suffix)).status_code == 404, suffix
        assert anonymous.get(runs_url(judged_study, suffix)).status_code in (401, 403), suffix
    before = list(ScoringRun.objects.values_list("pk", "is_default"))
    for client, expected in ((outsider, {404}), (anonymous, {401, 403})):
        assert client.post(runs_url(judged_study), PARAMETERS, format="json").status_code in expected
        assert client.post(runs_url(judged_study, f"{run_id}/make-default/")).status_code in expected
    assert list(ScoringRun.objects.values_list("pk", "is_default")) == before
    # Charlie's own study does not reach Alice's run either.
    from studies.design import services

    own = services.study_create(owner=charlie, name="Charlie's")
    assert outsider.get(f"/api/studies/{own.pk}/scoring-runs/{run_id}/").status_code == 404


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"bq": 1}, "bq"),
        ({"bq": 1000}, "bq"),
        ({"b": 1}, "b"),
        ({"weights": [0, 1]}, "weights"),  # the scale goes to grade 3
        ({"weights": []}, "weights"),
        ({"weights": ["x", 1, 2, 3]}, "weights"),
        ({"top": 0}, "top"),
        ({"formulation": "1999"}, "formulation"),
        ({"gain": "huge"}, "gain"),
        ({"scan": "random"}, "scan"),
        ({"judgments": "oracle"}, "judgments"),
    ],
)
def test_bad_parameters_are_400s_naming_the_field(
    judged_study, alice, data, field, django_capture_on_commit_callbacks
):
    assert max(judged_study.grade_values()) == 3
    response = create_run(
        client_for(alice), judged_study, {**PARAMETERS, **data}, django_capture_on_commit_callbacks
    )
    assert response.status_code == 400, response.content
    assert field in response.json(), response.json()
    assert not ScoringRun.objects.exists()


def test_reference_judgments_are_needed_unless_scoring_the_participants_own(
    worked_study, alice, django_capture_on_commit_callbacks
):
    client = client_for(alice)
    response = create_run(client, worked_study, PARAMETERS, django_capture_on_commit_callbacks)
    assert response.status_code == 400 and "judgments" in response.json()
    assert not ScoringRun.objects.exists()
    response = create_run(
        client, worked_study, {**PARAMETERS, "judgments": "participant"}, django_capture_on_commit_callbacks
    )
    assert response.status_code == 201, response.content
    run = ScoringRun.objects.get()
    assert run.status == "done" and run.reference_version is None
    assert client.get(runs_url(worked_study, f"{run.pk}/")).json()["reference_version_number"] is None


def count_queries(client, url, params=None):
    with CaptureQueriesContext(connection) as context:
        response = client.get(url, params or {})
    assert response.status_code == 200, response.content
    return len(context)


def test_queries_do_not_grow_with_rows(
    judged_study, alice, django_assert_max_num_queries, django_capture_on_commit_callbacks
):
    client = client_for(alice)
    first = create_run(client, judged_study, PARAMETERS, django_capture_on_commit_callbacks).json()["id"]
    session_id = SessionScore.objects.filter(run_id=first).first().session_id

    def urls(run_id):
        return [
            (runs_url(judged_study), {}),
            (runs_url(judged_study, f"{run_id}/"), {}),
            (runs_url(judged_study, f"{run_id}/sessions/"), {}),
            (runs_url(judged_study, f"{run_id}/sessions/"), {"curves": "1", "system": "A"}),
            (runs_url(judged_study, f"{run_id}/sessions/{session_id}/queries/"), {"by_rank": "1"}),
        ]

    before = [count_queries(client, url, params) for url, params in urls(first)]
    end_more_sessions(judged_study)
    second = create_run(
        client, judged_study, {**PARAMETERS, "make_default": False}, django_capture_on_commit_callbacks
    ).json()["id"]
    assert SessionScore.objects.filter(run_id=second).count() == 6
    assert client.get(runs_url(judged_study)).json()["count"] == 2
    for (url, params), limit in zip(urls(second), before, strict=True):
        with django_assert_max_num_queries(limit):
            response = client.get(url, params)
        assert response.status_code == 200
    assert len(client.get(runs_url(judged_study, f"{second}/sessions/")).json()["results"]) == 6
