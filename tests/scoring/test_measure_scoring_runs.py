"""A scoring run computes the measures it selected for every session, as the library does on the same
sessions, and stores them in SessionScore.measures keyed by name; the run form offers them as checkboxes."""

from datetime import timedelta

import numpy as np
import pytest
from django.urls import reverse
from django.utils.html import escape

from scoring import services
from scoring.lib.session import encode_sessions
from scoring.lib.session_measures import MEASURE_LABELS, MEASURES, MeasureParams, TrailQuery, score_measures
from scoring.models import ScoringRun, SessionScore
from studies.models import Event, Query
from tests.dashboards.conftest import (  # noqa: F401 (fixtures)
    _fresh_chart_cache,
    collection_docs,
    constructed,
)

pytestmark = pytest.mark.django_db


def _create(study, capture, **options):
    with capture(execute=True):
        run = services.scoring_run_create(study=study, make_default=False, **options)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return run


def _library(built, params, *, trails=True):
    sessions = [s for s in built.sessions if s["id"] is not None]
    batch = encode_sessions(
        [s["topic"] for s in sessions], [s["lists"] for s in sessions], built.grades, depth=100
    )
    # The constructed sessions: query q issued q seconds after
    # the start, examined to its scan mark, none opened.
    timed = (
        [
            [TrailQuery(start=float(q), depth=mark, opened={}) for q, mark in enumerate(s["marks"], start=1)]
            for s in sessions
        ]
        if trails
        else None
    )
    return sessions, score_measures(batch, MEASURES, params, trails=timed, keys=[s["id"] for s in sessions])


def test_every_selected_measure_is_stored_per_session_as_the_library_computes_it(
    constructed,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    run = _create(
        constructed.study, django_capture_on_commit_callbacks, measures=list(MEASURES), top=5, bq=2.0
    )
    assert run.measures == list(MEASURES)
    params = MeasureParams(k=5, bq=2.0, grade_max=3)
    assert (
        run.measure_params["k"] == 5
        and run.measure_params["bq"] == 2.0
        and run.measure_params["grade_max"] == 3
    )
    sessions, expected = _library(constructed, params)
    stored = {row.session_id: row.measures for row in SessionScore.objects.filter(run=run)}
    assert len(stored) == len(sessions) == 32
    for s, session in enumerate(sessions):
        row = stored[session["id"]]
        assert set(row) == set(MEASURES)  # PostgreSQL's jsonb keeps no key order
        for name in MEASURES:
            assert row[name] == pytest.approx(float(expected[name][s]), rel=1e-12, abs=1e-12), name
    # The sampled esNDCG is close to the exact one (10,000 paths per session).
    gaps = [abs(stored[s["id"]]["esndcg_mc"] - stored[s["id"]]["esndcg"]) for s in sessions]
    assert max(gaps) < 0.02


def test_a_run_without_measures_stores_none(constructed, django_capture_on_commit_callbacks):  # noqa: F811
    run = _create(constructed.study, django_capture_on_commit_callbacks)
    assert run.measures == []
    assert list(SessionScore.objects.filter(run=run).values_list("measures", flat=True)) == [{}] * 32


def test_a_rescore_of_some_sessions_gives_them_the_same_sampled_values(
    constructed,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    run = _create(constructed.study, django_capture_on_commit_callbacks, measures=["esndcg_mc"])
    before = dict(SessionScore.objects.filter(run=run).values_list("session_id", "measures"))
    some = sorted(before)[::5]
    with django_capture_on_commit_callbacks(execute=True):
        ScoringRun.objects.filter(pk=run.pk).update(is_default=True)
        services.study_scores_mark_stale(study_id=run.study_id, session_ids=some)
    after = dict(SessionScore.objects.filter(run=run).values_list("session_id", "measures"))
    assert after == before


def test_opened_documents_and_their_dwell_time_the_trail(constructed, django_capture_on_commit_callbacks):  # noqa: F811
    session = next(s for s in constructed.sessions if s["id"] is not None and len(s["lists"]) >= 2)
    participant = session["assignment"].participant
    first, second = session["lists"][0][:2]
    late = session["lists"][1][0]

    def event(kind, key, data):
        Event.objects.create(
            participant=participant,
            session_id=session["id"],
            type=kind,
            client_event_id=key,
            payload={"data": data, "ack": {"ok": True}},
        )

    event(
        "document_open", "o1", {"doc": second, "query": 1, "rank": 99}
    )  # the rank shown counts, not the client's
    event("document_close", "c1", {"doc": second, "query": 1, "dwell_ms": 20_000})
    event("document_close", "c2", {"doc": second, "query": 1, "dwell_ms": 5_500})  # opened twice: dwells add
    event("document_open", "o2", {"doc": late, "query": 2})  # never closed: dwell unknown
    Event.objects.create(
        participant=participant,
        session_id=session["id"],
        type="document_open",
        client_event_id="refused",
        payload={"data": {"doc": first, "query": 1}, "ack": {"ok": False}},
    )
    Query.objects.filter(session_id=session["id"], position=2).update(
        issued_at=Query.objects.get(session_id=session["id"], position=1).issued_at + timedelta(seconds=90)
    )
    queries = {
        session["id"]: list(
            Query.objects.filter(session_id=session["id"]).order_by("position").values_list("pk", flat=True)
        )
    }
    [trail] = services.session_trails([session["id"]], queries, {})
    assert trail[0].start == pytest.approx(1.0) and trail[1].start == pytest.approx(91.0)
    assert trail[0].opened == {2: pytest.approx(25.5)} and trail[1].opened == {1: None}
    assert all(q.opened == {} for q in trail[2:]) and all(q.depth is None for q in trail)

    run = _create(
        constructed.study, django_capture_on_commit_callbacks, measures=["tbg", "u_measure"], top=10
    )
    row = SessionScore.objects.get(run=run, session_id=session["id"])
    sessions = [s for s in constructed.sessions if s["id"] == session["id"]]
    batch = encode_sessions(
        [s["topic"] for s in sessions], [s["lists"] for s in sessions], constructed.grades, depth=100
    )
    marks = session["marks"]
    expected_trail = [
        TrailQuery(start=q.start, depth=max(marks[i], 2 if i == 0 else 1 if i == 1 else 0), opened=q.opened)
        for i, q in enumerate(trail)
    ]
    expected = score_measures(
        batch, ["tbg", "u_measure"], MeasureParams(k=10, grade_max=3), trails=[expected_trail]
    )
    assert row.measures["tbg"] == pytest.approx(float(expected["tbg"][0]), rel=1e-12)
    assert row.measures["u_measure"] == pytest.approx(float(expected["u_measure"][0]), rel=1e-12)


def test_an_unknown_measure_is_refused_and_nothing_is_created(constructed):  # noqa: F811
    with pytest.raises(services.ScoringError, match="unknown measure 'ndgc'"):
        services.scoring_run_create(study=constructed.study, measures=["ndgc"])
    assert not ScoringRun.objects.exists()


def test_the_run_form_offers_the_measures_as_checkboxes_in_plain_words(
    client,
    constructed,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    study = constructed.study
    client.force_login(study.owner)
    page = client.get(reverse("scoring:runs", args=[study.slug])).content.decode()
    for name in MEASURES:
        assert f'type="checkbox" name="measures" value="{name}"' in page
        assert escape(MEASURE_LABELS[name]) in page
    form = {
        "weights": "0,1,10,100",
        "b": "2",
        "bq": "4",
        "top": "10",
        "formulation": "2008",
        "gain": "linear",
        "duplicates": "every",
        "short_lists": "pad",
        "scan": "fixed",
        "judgments": "reference",
        "measures": ["nsdcg", "srbp"],
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("scoring:runs", args=[study.slug]), form)
    run = ScoringRun.objects.get(study=study)
    assert response.status_code == 302 and run.measures == ["nsdcg", "srbp"]
    values = SessionScore.objects.filter(run=run).values_list("measures", flat=True)
    assert all(set(v) == {"nsdcg", "srbp"} for v in values) and len(values) == 32
    assert np.isfinite([v["srbp"] for v in values]).all()
