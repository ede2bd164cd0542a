"""A run's stored per-session and per-query results are
what scoring/lib/session.py gives on the same sessions."""

import numpy as np
import pytest

from scoring import services
from scoring.lib.session import SUMMARIES, SessionParams, session_grid
from scoring.models import QueryScore, SessionScore

from .conftest import library_scores

pytestmark = pytest.mark.django_db


def test_every_summary_and_curve_is_the_librarys(scored):
    built, run = scored
    sessions, _, expected = library_scores(built)
    stored = {row.session_id: row for row in SessionScore.objects.filter(run=run)}
    assert len(stored) == len(sessions) == 32
    for s, session in enumerate(sessions):
        row = stored[session["id"]]
        assert row.n_queries == len(session["lists"])
        for name in SUMMARIES:
            assert getattr(row, name) == pytest.approx(
                float(getattr(expected, name)[s]), rel=1e-12, abs=1e-12
            )
        length = int(expected.lengths[s])
        assert row.length == length
        np.testing.assert_allclose(row.curve_array(), expected.curve[s, :length], rtol=1e-12)
        np.testing.assert_allclose(np.frombuffer(bytes(row.ideal)), expected.ideal[s, :length], rtol=1e-12)
        assert row.system.code == session["system"] and row.participant.code == session["participant"]
        assert row.end_reason == session["end"]


def test_each_querys_sdcg_at_x_and_by_rank_to_100_are_stored(scored):
    built, run = scored
    sessions, _, expected = library_scores(built)
    by_session = {}
    for row in QueryScore.objects.filter(run=run).order_by("session_id", "position"):
        by_session.setdefault(row.session_id, []).append(row)
    grades = built.grades
    for s, session in enumerate(sessions):
        rows = by_session[session["id"]]
        assert [r.position for r in rows] == list(range(1, len(session["lists"]) + 1))
        assert [r.is_last for r in rows] == [False] * (len(rows) - 1) + [True]
        np.testing.assert_allclose([r.sdcg for r in rows], expected.per_query_of(s), rtol=1e-12)
        for q, (row, ranked) in enumerate(zip(rows, session["lists"], strict=True), start=1):
            # By hand: gain 0-1-10-100, rank discount 1/(1 + log2 i), query discount 1/(1 + log4 q).
            gains = np.zeros(100)
            gains[: len(ranked)] = [(0, 1, 10, 100)[grades[session["topic"]].get(d, 0)] for d in ranked]
            ranks = np.arange(1, 101)
            by_hand = np.cumsum(gains / (1 + np.log2(ranks))) / (1 + np.log(q) / np.log(4))
            np.testing.assert_allclose(
                np.frombuffer(bytes(row.by_rank), dtype=np.float32), by_hand, rtol=1e-5
            )


def test_the_grid_is_session_grid_in_one_pass(scored):
    built, run = scored
    sessions, batch, _ = library_scores(built, curves=False)
    grid = session_grid(batch, SessionParams(), b_values=run.grid_b, bq_values=run.grid_bq)
    stored = {row.session_id: row for row in SessionScore.objects.filter(run=run)}
    for s, session in enumerate(sessions):
        values = np.frombuffer(bytes(stored[session["id"]].grid), dtype=np.float32).reshape(
            len(run.grid_b), len(run.grid_bq), len(SUMMARIES)
        )
        for k, name in enumerate(SUMMARIES):
            np.testing.assert_allclose(values[:, :, k], getattr(grid, name)[:, :, s], rtol=1e-5)


@pytest.mark.parametrize(
    "options",
    [
        {"b": 4.0, "bq": 2.0, "top": 5, "duplicates": "first"},
        {"formulation": "kanoulas2011"},
        {"short_lists": "as_is", "formulation": "2002"},
        {"scan": "observed"},
    ],
)
def test_a_run_with_other_options_scores_as_the_library_does(
    constructed, django_capture_on_commit_callbacks, options
):
    with django_capture_on_commit_callbacks(execute=True):
        run = services.scoring_run_create(study=constructed.study, make_default=False, **options)
    run.refresh_from_db()
    assert run.status == "done", run.error
    sessions, _, expected = library_scores(constructed, SessionParams(**options))
    stored = {row.session_id: row for row in SessionScore.objects.filter(run=run)}
    for s, session in enumerate(sessions):
        row = stored[session["id"]]
        assert row.final == pytest.approx(float(expected.final[s]), rel=1e-12, abs=1e-12)
        assert row.normalized_final == pytest.approx(
            float(expected.normalized_final[s]), rel=1e-12, abs=1e-12
        )
        assert row.average == pytest.approx(float(expected.average[s]), rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(
            row.curve_array(), expected.curve[s, : int(expected.lengths[s])], rtol=1e-12
        )


def test_participant_judgments_score_each_session_against_its_own_grades(
    constructed, collection_docs, django_capture_on_commit_callbacks
):
    from django.utils import timezone

    from scoring.lib.session import encode_sessions, score_sessions
    from studies.models import Judgment

    first = next(s for s in constructed.sessions if s["id"] is not None)
    now = timezone.now()
    own = {first["lists"][0][0]: 3, first["lists"][-1][-1]: 2}
    Judgment.objects.bulk_create(
        Judgment(session_id=first["id"], document=collection_docs[d], grade=g, created_at=now, updated_at=now)
        for d, g in own.items()
    )
    with django_capture_on_commit_callbacks(execute=True):
        run = services.scoring_run_create(
            study=constructed.study, judgments="participant", make_default=False
        )
    run.refresh_from_db()
    expected = score_sessions(encode_sessions(["t"], [first["lists"]], {"t": own}, depth=100))
    row = SessionScore.objects.get(run=run, session_id=first["id"])
    assert row.final == pytest.approx(float(expected.final[0]))
    assert row.normalized_final == pytest.approx(float(expected.normalized_final[0]))
    assert run.reference_version is None
    # A session whose participant judged nothing has no gain and an empty recall base: 0, never NaN.
    others = SessionScore.objects.filter(run=run).exclude(session_id=first["id"])
    assert set(others.values_list("final", flat=True)) == {0.0}
    assert set(others.values_list("normalized_final", flat=True)) == {0.0}


def test_a_run_records_the_reference_version_it_used(scored):
    built, run = scored
    assert run.reference_version == built.study.reference_versions.get(number=1)
    assert run.is_default and not run.stale
    assert run.progress_done == run.progress_total == 32


def test_bad_parameters_are_refused_before_anything_is_queued(constructed):
    with pytest.raises(services.ScoringError, match="bq"):
        services.scoring_run_create(study=constructed.study, bq=1000)
    with pytest.raises(services.ScoringError, match="weights give gains for grades 0..1"):
        services.scoring_run_create(study=constructed.study, weights=(0, 1))
