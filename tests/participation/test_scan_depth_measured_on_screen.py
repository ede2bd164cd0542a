"""Science: scan="exposure" cuts each query's list at the deepest rank that was on the
participant's screen for at least N ms (ScoringRun.scan_min_visible_ms), beside the observed depth of scan
marks and opens. The demo's simulated searchers report exactly the ranks they scanned, so with N = 0 the
measured depth is their scan mark and the scores equal scan="observed"; a longer N sees less and never scores
more; with N longer than anything was on screen nothing was looked at, and the sessions score 0."""

import pytest

from scoring.models import SessionScore
from scoring.services import scoring_run_create

from .conftest import SIMULATED_REFERENCE

pytestmark = pytest.mark.django_db


@pytest.fixture
def simulated(simulated_study):
    """The simulated study, its reference imported as a reference version (scoring reads one)."""
    from studies.assessment.references import reference_version_import_qrels

    reference_version_import_qrels(
        study=simulated_study,
        lines=[f"{t} 0 {d} {g}" for t, docs in SIMULATED_REFERENCE.items() for d, g in docs.items()],
        path="reference.qrels",
        created_by=simulated_study.owner,
    )
    return simulated_study


def finals(study, capture, **options) -> dict[int, float]:
    with capture(execute=True):  # scoring is queued on commit (Celery eager here)
        run = scoring_run_create(study=study, make_default=False, **options)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return dict(SessionScore.objects.filter(run=run).values_list("session_id", "final"))


def test_the_depth_measured_on_screen_scores_as_the_participants_looked(
    simulated, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    observed = finals(simulated, capture, scan="observed")
    assert any(value > 0 for value in observed.values())
    assert finals(simulated, capture, scan="exposure", scan_min_visible_ms=0) == pytest.approx(observed)
    patient = finals(simulated, capture, scan="exposure", scan_min_visible_ms=2400)
    assert all(patient[s] <= observed[s] + 1e-9 for s in observed)
    # ...and it did see less: some query's deepest scanned rank was on screen for under 2.4 s.
    from studies.models import ResultExposure

    deepest: dict[int, tuple[int, int]] = {}
    for query_id, rank, visible in ResultExposure.objects.values_list(
        "shown_result__query_id", "shown_result__rank", "visible_ms"
    ):
        deepest[query_id] = max(deepest.get(query_id, (0, 0)), (rank, visible))
    assert any(visible < 2400 for _, visible in deepest.values())
    assert set(finals(simulated, capture, scan="exposure", scan_min_visible_ms=600_000).values()) == {0.0}


def test_a_threshold_out_of_range_is_refused(simulated):
    from scoring.services import ScoringError

    with pytest.raises(ScoringError, match="scan_min_visible_ms"):
        scoring_run_create(study=simulated, scan="exposure", scan_min_visible_ms=-5)


def test_the_meta_evaluation_puts_what_was_on_screen_beside_the_ratings(
    simulated, django_capture_on_commit_callbacks
):
    """Active time and results seen per query are correlated with the post-task ratings like the measures."""
    from scoring import selectors
    from scoring.dashboards.registry import _meta_compute
    from scoring.models import ScoringRun

    finals(simulated, django_capture_on_commit_callbacks, scan="observed")
    run = ScoringRun.objects.filter(study=simulated).latest("pk")
    from django.http import QueryDict

    scores = selectors.run_scores(run, selectors.ChartFilters.from_query(QueryDict(""), simulated))
    result, _, labels = _meta_compute(run, scores, "session")
    correlated = {a.measure for a in result.correlations}
    assert {"active_s", "results_seen_per_query"} <= correlated
    assert labels["active_s"] == "active time (s)"


def test_the_time_measures_take_when_each_result_was_first_on_screen(simulated):
    """TBG's trail carries, per rank, the seconds after its query when the result was first on screen."""
    from collections import defaultdict

    from scoring.services.chunks import session_trails
    from studies.models import Query, ResultExposure

    queries = defaultdict(list)
    for query_id, session_id in (
        Query.objects.filter(session__assignment__participant__study=simulated)
        .order_by("session_id", "position")
        .values_list("pk", "session_id")
    ):
        queries[session_id].append(query_id)
    ids = list(queries)
    trails = session_trails(ids, dict(queries), {})
    exposure = ResultExposure.objects.filter(shown_result__page=1).select_related("shown_result").first()
    query_id, rank = exposure.shown_result.query_id, exposure.shown_result.rank
    session = ids.index(Query.objects.get(pk=query_id).session_id)
    trail = trails[session][queries[ids[session]].index(query_id)]
    assert trail.reached[rank] == pytest.approx(
        (exposure.shown_result.shown_at - Query.objects.get(pk=query_id).issued_at).total_seconds()
        + exposure.first_visible_ms / 1000
    )
