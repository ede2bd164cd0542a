"""Properties of the session measures (hypothesis): bounds, monotonicity in grades, and the invariances and
special cases their papers state."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from scoring.lib.session import encode_sessions
from scoring.lib.session_measures import MEASURES, MeasureParams, TrailQuery, score_measures

DOCS = [f"d{i}" for i in range(10)]
NORMALIZED = ("nsdcg", "ndcg_mean", "ndcg_max", "ndcg_first", "ndcg_last", "esndcg", "esndcg_mc")


@st.composite
def sessions(draw, max_queries=4):
    grades = {doc: draw(st.integers(0, 3)) for doc in DOCS}
    lists = [
        draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=5))
        for _ in range(draw(st.integers(1, max_queries)))
    ]
    return grades, lists


@st.composite
def observed_trails(draw, lists, k):
    trail, clock = [], 0.0
    for ranked in lists:
        clock += draw(st.floats(0, 200))
        ranks = range(1, min(len(ranked), k) + 1)
        opened = {r: draw(st.none() | st.floats(0, 120)) for r in ranks if draw(st.booleans())}
        trail.append(TrailQuery(start=clock, opened=opened))
    return trail


def measure(grades, lists, names=MEASURES, trail=None, **options):
    params = MeasureParams(**{"k": 5, "grade_max": 3, "mc_paths": 500, **options})
    batch = encode_sessions(["T"], [lists], {"T": grades}, depth=5)
    values = score_measures(batch, names, params, trails=None if trail is None else [trail])
    return {name: float(value[0]) for name, value in values.items()}


@settings(max_examples=200, deadline=None)
@given(sessions())
def test_every_measure_is_finite_and_within_its_bounds(session):
    grades, lists = session
    values = measure(grades, lists)
    assert all(math.isfinite(v) and v >= 0 for v in values.values())
    shown = [doc for ranked in lists for doc in ranked[:5] if grades[doc] > 0]
    for name in NORMALIZED:
        # A path that meets one relevant document twice can beat the ideal path of its length, which holds
        # each relevant document once (docs: esNDCG counts duplicates, as Jiang & Allan's code does).
        if name.startswith("esndcg") and len(shown) != len(set(shown)):
            continue
        assert values[name] <= 1 + 1e-12, name
    assert values["srbp"] <= 1 + 1e-12  # the weights of every (query, rank) add up to at most 1
    relevant = {doc for ranked in lists for doc in ranked[:5] if grades[doc] > 0}
    assert values["tbg"] <= 0.64 * 0.77 * len(relevant) + 1e-12
    assert values["u_measure"] <= sum(grades[doc] for doc in relevant) + 1e-12
    # sDCG/q is at most the ideal list's DCG@k (each query's DCG is, and the query discounts are <= 1).
    ideal = sorted((2.0**g - 1 for g in grades.values()), reverse=True)[:5]
    assert values["sdcg_per_query"] <= sum(g / math.log2(r + 2) for r, g in enumerate(ideal)) + 1e-9


@settings(max_examples=200, deadline=None)
@given(sessions(), st.data())
def test_showing_a_better_document_never_lowers_a_measure(session, data):
    """Replace a shown document by an unshown one of a higher grade: the recall base (so every ideal) is the
    same, the session only got better. With observed clicks the times do not depend on relevance, so TBG and U
    are included; without them the click model reads relevant documents longer (see the docs)."""
    grades, lists = session
    cells = [(q, r) for q, ranked in enumerate(lists) for r in range(min(len(ranked), 5))]
    assume(cells)
    q, r = data.draw(st.sampled_from(cells))
    unseen = [
        doc
        for doc in DOCS
        if doc not in {d for ranked in lists for d in ranked} and grades[doc] > grades[lists[q][r]]
    ]
    assume(unseen)
    better = [list(ranked) for ranked in lists]
    better[q][r] = data.draw(st.sampled_from(unseen))
    trail = data.draw(observed_trails(lists, 5))
    names = [m for m in MEASURES if m != "esndcg_mc"]
    before, after = measure(grades, lists, names, trail), measure(grades, better, names, trail)
    for name in names:
        assert after[name] >= before[name] - 1e-12, name


@settings(max_examples=200, deadline=None)
@given(sessions(), st.sampled_from(DOCS))
def test_raising_a_grade_never_lowers_the_unnormalized_measures(session, doc):
    grades, lists = session
    assume(grades[doc] < 3)
    raised = {**grades, doc: grades[doc] + 1}
    trail = [TrailQuery(start=60.0 * q, opened={}) for q in range(len(lists))]
    names = ["sdcg_per_query", "srbp", "tbg", "u_measure"]
    before, after = measure(grades, lists, names, trail), measure(raised, lists, names, trail)
    for name in names:
        assert after[name] >= before[name] - 1e-12, name


@settings(max_examples=200, deadline=None)
@given(sessions(), st.floats(0, 0.95))
def test_srbp_with_b_1_is_rbp_of_the_first_query(session, p):
    """Lipani et al.: with b = 1 the user never reformulates, and sRBP is RBP (graded, r = g / g_max)."""
    grades, lists = session
    rbp = (1 - p) * sum(p**r * grades[doc] / 3 for r, doc in enumerate(lists[0][:5]))
    assert measure(grades, lists, ["srbp"], srbp_p=p, srbp_b=1.0)["srbp"] == pytest.approx(rbp, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(sessions(), st.floats(0.01, 0.95))
def test_srbp_with_b_0_reads_the_first_result_of_each_query(session, p):
    grades, lists = session
    expected = (1 - p) * sum(p**q * grades[ranked[0]] / 3 for q, ranked in enumerate(lists) if ranked)
    assert measure(grades, lists, ["srbp"], srbp_p=p, srbp_b=0.0)["srbp"] == pytest.approx(
        expected, abs=1e-12
    )


@settings(max_examples=200, deadline=None)
@given(sessions(), st.floats(0, 1))
def test_esndcg_without_reformulation_is_the_first_querys_expected_ndcg(session, p_down):
    grades, lists = session
    only_first = measure(grades, lists[:1], ["esndcg"], p_reformulate=0.0, p_down=p_down)["esndcg"]
    assert measure(grades, lists, ["esndcg"], p_reformulate=0.0, p_down=p_down)["esndcg"] == pytest.approx(
        only_first, abs=1e-12
    )


@settings(max_examples=200, deadline=None)
@given(sessions())
def test_esndcg_of_a_user_who_reads_everything_is_the_ndcg_of_the_whole_concatenation(session):
    grades, lists = session
    path = [doc for ranked in lists for doc in ranked[:5]]
    ideal = sorted((2.0**g - 1 for g in grades.values() if g > 0), reverse=True)[: len(path)]
    best = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    dcg = sum((2.0 ** grades[doc] - 1) / math.log2(i + 2) for i, doc in enumerate(path))
    value = measure(grades, lists, ["esndcg"], p_reformulate=1.0, p_down=1.0)["esndcg"]
    assert value == pytest.approx(dcg / best if best and path else 0.0, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 5), st.sampled_from([1.5, 2.0, 4.0]), st.sampled_from([2.0, 4.0, 10.0]))
def test_a_session_that_shows_the_ideal_list_every_time_scores_1(n, b, bq):
    grades = {doc: 3 - i % 4 for i, doc in enumerate(DOCS)}
    ideal = sorted(DOCS, key=lambda doc: -grades[doc])[:5]
    values = measure(
        grades, [ideal] * n, ["nsdcg", "ndcg_mean", "ndcg_max", "ndcg_first", "ndcg_last"], b=b, bq=bq
    )
    assert all(v == pytest.approx(1.0, abs=1e-12) for v in values.values())


@settings(max_examples=200, deadline=None)
@given(sessions(), st.permutations(range(4)))
def test_the_mean_and_best_ndcg_ignore_the_order_of_the_queries(session, order):
    grades, lists = session
    shuffled = [lists[i] for i in order if i < len(lists)]
    names = ["ndcg_mean", "ndcg_max"]
    assert measure(grades, shuffled, names) == pytest.approx(measure(grades, lists, names), abs=1e-12)
    reversed_values = measure(grades, lists[::-1], ["ndcg_first", "ndcg_last"])
    values = measure(grades, lists, ["ndcg_first", "ndcg_last"])
    assert reversed_values["ndcg_first"] == pytest.approx(values["ndcg_last"], abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(sessions(), st.data())
def test_a_repeated_list_adds_nothing_to_tbg_or_u(session, data):
    """Smucker & Clarke credit a document once; so does U. Repeating an earlier list later in the session,
    with nothing opened from it, only costs time that no later result pays for."""
    grades, lists = session
    trail = data.draw(observed_trails(lists, 5))
    again = data.draw(st.sampled_from(range(len(lists))))
    longer_trail = [*trail, TrailQuery(start=trail[-1].start + 10.0, opened={})]
    before = measure(grades, lists, ["tbg", "u_measure"], trail)
    after = measure(grades, [*lists, lists[again]], ["tbg", "u_measure"], longer_trail)
    assert after == pytest.approx(before, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(sessions(), st.data())
def test_with_an_endless_half_life_tbg_counts_the_relevant_documents_reached(session, data):
    grades, lists = session
    trail = data.draw(observed_trails(lists, 5))
    relevant = {doc for ranked in lists for doc in ranked[:5] if grades[doc] > 0}
    value = measure(grades, lists, ["tbg"], trail, half_life=1e300)["tbg"]
    assert value == pytest.approx(0.64 * 0.77 * len(relevant), rel=1e-12)


def test_u_gives_nothing_read_after_the_patience_runs_out():
    grades = {"a": 3, "b": 2}
    trail = [TrailQuery(start=0.0, opened={1: 10.0}), TrailQuery(start=700.0, opened={1: 5.0})]
    values = measure(grades, [["a"], ["b"]], ["u_measure"], trail)
    assert values["u_measure"] == pytest.approx(3 * (1 - 14.4 / 600))
    assert np.isclose(measure(grades, [["a"]], ["u_measure"], trail[:1])["u_measure"], values["u_measure"])
