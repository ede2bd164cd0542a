"""The paired test of participant means (issue 42), by hand and against scipy, and its symmetry."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from scoring.lib.statistics import paired_means, paired_participant_means, wilcoxon_method

# Six participants; P1 and P2 worked two sessions on one system; P6 used only A, so it is left out.
SESSIONS = [
    ("P1", "A", 1.0),
    ("P1", "A", 3.0),
    ("P1", "B", 4.0),
    ("P2", "A", 2.0),
    ("P2", "B", 2.5),
    ("P2", "B", 3.5),
    ("P3", "A", 5.0),
    ("P3", "B", 3.5),
    ("P4", "A", 0.0),
    ("P4", "B", 3.0),
    ("P5", "A", 1.0),
    ("P5", "B", 1.5),
    ("P6", "A", 9.0),
]


def _columns(sessions):
    participants, systems, values = zip(*sessions, strict=True)
    return np.array(values), np.array(systems), np.array(participants)


def test_the_worked_example_equals_the_hand_computation():
    values, systems, participants = _columns(SESSIONS)
    result = paired_means(values, systems, participants, "A", "B", summary="final gain")
    # Participant means A = 2, 2, 5, 0, 1 and B = 4, 3, 3.5, 3, 1.5: d = 2, 1, -1.5, 3, 0.5.
    assert result.participants == ("P1", "P2", "P3", "P4", "P5") and result.n_pairs == 5
    assert result.mean_first == pytest.approx(2.0) and result.mean_second == pytest.approx(3.0)
    assert result.mean_difference == pytest.approx(1.0)
    # sum of squared deviations 11.5, sd = sqrt(11.5 / 4) = 1.695582, se = sd / sqrt(5) = 0.758288
    assert result.t == pytest.approx(1.0 / 0.758288, rel=1e-5) and result.df == 4
    assert result.d_z.value == pytest.approx(1.0 / 1.695582, rel=1e-5)
    # t_{0.975, 4} = 2.776445
    assert result.low == pytest.approx(1 - 2.776445 * 0.758288, rel=1e-5)
    assert result.high == pytest.approx(1 + 2.776445 * 0.758288, rel=1e-5)
    # |d| ranks 4, 2, 3, 5, 1: T- = 3 (P3's); exactly 5 of the 32 sign patterns have a sum <= 3.
    assert result.wilcoxon == 3.0 and result.wilcoxon_method == "exact" and result.n_wilcoxon == 5
    assert result.p_wilcoxon == pytest.approx(2 * 5 / 32)
    assert "5 participants" in result.reading and "B scores 1 higher than A" in result.reading
    assert "Wilcoxon signed-rank (exact" in result.reading


def test_the_tests_are_scipys_on_the_participant_means():
    values, systems, participants = _columns(SESSIONS)
    result = paired_means(values, systems, participants, "A", "B")
    a, b = np.array([2.0, 2.0, 5.0, 0.0, 1.0]), np.array([4.0, 3.0, 3.5, 3.0, 1.5])
    t = stats.ttest_rel(b, a)
    assert result.t == pytest.approx(t.statistic) and result.p_t == pytest.approx(t.pvalue)
    low, high = t.confidence_interval(0.95)
    assert (result.low, result.high) == (pytest.approx(low), pytest.approx(high))
    w = stats.wilcoxon(b, a, method="exact")
    assert result.wilcoxon == pytest.approx(w.statistic) and result.p_wilcoxon == pytest.approx(w.pvalue)


def test_tied_differences_take_the_normal_approximation_and_say_so():
    rng = np.random.default_rng(7)
    a = rng.normal(size=12)
    d = np.array([1.0, 1.0, -0.5, 2.0, 0.0, 0.5, 1.5, -1.0, 3.0, 0.5, 2.5, 1.0])
    participants = np.r_[np.arange(12), np.arange(12)]
    systems = np.repeat(["A", "B"], 12)
    result = paired_means(np.r_[a, a + d], systems, participants, "A", "B")
    assert wilcoxon_method(d) == "approx" and result.wilcoxon_method == "normal approximation"
    assert result.n_wilcoxon == 11  # the participant with equal means drops out of the ranking
    expected = stats.wilcoxon(a + d, a, zero_method="wilcox", method="approx", correction=False)
    assert result.p_wilcoxon == pytest.approx(expected.pvalue)
    assert "normal approximation, 11 non-zero differences" in result.reading


def test_more_than_fifty_pairs_take_the_normal_approximation():
    d = np.linspace(0.01, 0.6, 51) - 0.2
    assert wilcoxon_method(d) == "approx" and wilcoxon_method(d[:50]) == "exact"


def test_fewer_than_two_participants_with_both_systems_give_no_test():
    values, systems, participants = _columns([("P1", "A", 1.0), ("P1", "B", 2.0), ("P2", "A", 3.0)])
    assert paired_means(values, systems, participants, "A", "B") is None
    assert paired_participant_means(values, systems, participants) == []


def test_three_systems_give_each_pair_its_own_participants():
    values, systems, participants = _columns(
        SESSIONS + [("P1", "C", 0.0), ("P2", "C", 1.0), ("P3", "C", 2.0)]
    )
    pairs = paired_participant_means(values, systems, participants)
    assert [(p.first, p.second, p.n_pairs) for p in pairs] == [("A", "B", 5), ("A", "C", 3), ("B", "C", 3)]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 7), st.sampled_from(["A", "B"]), st.integers(-20, 20).map(lambda v: v / 4)),
        min_size=4,
        max_size=40,
    )
)
def test_swapping_the_systems_flips_the_sign_and_keeps_every_p(sessions):
    values, systems, participants = _columns(sessions)
    forward = paired_means(values, systems, participants, "A", "B")
    backward = paired_means(values, systems, participants, "B", "A")
    assert (forward is None) == (backward is None)
    if forward is None:
        return
    assert backward.mean_difference == pytest.approx(-forward.mean_difference)
    assert (backward.low, backward.high) == (pytest.approx(-forward.high), pytest.approx(-forward.low))
    assert backward.n_pairs == forward.n_pairs and backward.wilcoxon_method == forward.wilcoxon_method
    np.testing.assert_allclose([backward.t], [-forward.t], equal_nan=True)
    np.testing.assert_allclose(
        [backward.p_t, backward.p_wilcoxon], [forward.p_t, forward.p_wilcoxon], equal_nan=True
    )
