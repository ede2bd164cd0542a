"""Properties of the agreement estimates (pure, hypothesis): naming the graders or the documents in another
order changes no figure, and every interval holds its estimate and ends at most at 1."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from scoring.lib import reliability

GRADE = st.sampled_from([np.nan, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0])  # mostly non-relevant, some gaps
DATA = st.integers(2, 5).flatmap(
    lambda graders: st.integers(2, 25).flatmap(lambda docs: arrays(float, (graders, docs), elements=GRADE))
)


def figures(estimate):
    return np.array([estimate.estimate, estimate.se, estimate.ci_low, estimate.ci_high, estimate.p_value])


def same(a, b):
    return np.allclose(figures(a), figures(b), atol=1e-9, equal_nan=True)


@settings(max_examples=60, deadline=None)
@given(DATA, st.randoms(use_true_random=False))
def test_reordering_graders_and_documents_changes_nothing(data, rng):
    graders, documents = list(range(data.shape[0])), list(range(data.shape[1]))
    rng.shuffle(graders)
    rng.shuffle(documents)
    shuffled = data[graders][:, documents]
    for weighting in reliability.WEIGHTINGS:
        assert same(
            reliability.fleiss_kappa_estimate(data, range(4), weighting),
            reliability.fleiss_kappa_estimate(shuffled, range(4), weighting),
        )
        assert same(
            reliability.gwet_ac_many_estimate(data, range(4), weighting),
            reliability.gwet_ac_many_estimate(shuffled, range(4), weighting),
        )
    for level in ("nominal", "interval"):
        assert same(
            reliability.krippendorff_alpha_analytic(data, level, range(4)),
            reliability.krippendorff_alpha_analytic(shuffled, level, range(4)),
        )


@settings(max_examples=60, deadline=None)
@given(arrays(np.int64, (4, 4), elements=st.integers(0, 30)))
def test_swapping_the_two_graders_changes_nothing_and_intervals_hold_their_estimate(table):
    for weighting in reliability.WEIGHTINGS:
        for coefficient in (
            reliability.cohen_kappa_estimate,
            reliability.gwet_ac_estimate,
            reliability.percent_agreement_estimate,
        ):
            estimate = coefficient(table, weighting)
            assert same(estimate, coefficient(table.T, weighting))
            if np.isfinite(estimate.ci_low):
                assert estimate.ci_low <= estimate.estimate <= estimate.ci_high <= 1.0
                assert 0.0 <= estimate.p_value <= 1.0


def test_a_true_zero_reads_as_zero_in_every_order():
    """The table hypothesis found (it once made this test flaky): its quadratic-weighted kappa is exactly 0,
    and the floating-point noise around it gave two orders two different se and p-values (0.44 and 0.53)."""
    table = np.array([[0.0, 0.0, 3.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
    reordered = table[:, [0, 2, 3, 1]]
    for data in (table, reordered, table[::-1]):
        found = reliability.fleiss_kappa_estimate(data, range(4), "quadratic")
        assert (found.estimate, found.se, found.p_value) == (0.0, 0.0, 1.0)
