"""Properties every formulation must have, on random gain vectors and random qrels/runs."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.lib import metrics

gain_rows = st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, 10.0, 100.0]), min_size=1, max_size=20)
formulations = st.sampled_from(metrics.FORMULATIONS)
bases = st.floats(min_value=1.5, max_value=10.0)


@settings(max_examples=150, deadline=None)
@given(row=gain_rows, seed=st.integers(0, 2**32 - 1))
def test_cg_does_not_depend_on_the_order(row, seed):
    gains = np.array(row)
    shuffled = np.random.default_rng(seed).permutation(gains)
    assert metrics.cumulative_gain(shuffled)[-1] == metrics.cumulative_gain(gains)[-1]


@settings(max_examples=150, deadline=None)
@given(row=gain_rows, data=st.data(), formulation=formulations, b=bases)
def test_moving_a_more_relevant_document_up_never_lowers_dcg(row, data, formulation, b):
    upper = data.draw(st.integers(0, len(row) - 1))
    lower = data.draw(st.integers(upper, len(row) - 1))  # a deeper rank
    gains = np.array(row)
    # Before: the more relevant of the two documents sits at the deeper rank; after: it has moved up.
    small, large = sorted((gains[upper], gains[lower]))
    gains[upper], gains[lower] = small, large
    swapped = gains.copy()
    swapped[upper], swapped[lower] = large, small
    before = metrics.discounted_cumulative_gain(gains, formulation, b)
    after = metrics.discounted_cumulative_gain(swapped, formulation, b)
    assert np.all(after >= before - 1e-9)


grades = st.integers(min_value=-1, max_value=3)
docs = st.sampled_from([f"d{i}" for i in range(12)])
qrels_strategy = st.dictionaries(
    st.sampled_from("abc"), st.dictionaries(docs, grades, min_size=1), min_size=1
)
run_strategy = st.dictionaries(
    st.sampled_from("abcd"), st.dictionaries(docs, st.sampled_from([0.0, 1.0, 2.5]))
)


@settings(max_examples=150, deadline=None)
@given(qrels=qrels_strategy, run=run_strategy, formulation=formulations, b=bases, exponential=st.booleans())
def test_ndcg_stays_between_0_and_1(qrels, run, formulation, b, exponential):
    ranked = metrics.rank_run(qrels, run, all_topics=True)
    gain = "exponential" if exponential else "linear"
    weights = metrics.default_weights(formulation)
    values = metrics.ndcg_scores(ranked, [None, 1, 3, 10], formulation, b, weights, gain)
    assert np.all(np.isfinite(values))
    assert np.all(values >= 0.0)
    assert np.all(values <= 1.0 + 1e-12)
