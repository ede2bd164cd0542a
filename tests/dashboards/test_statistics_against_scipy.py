"""scoring/lib/statistics.py against scipy on known data (no database)."""

import numpy as np
import pytest
from scipy import stats

from scoring.lib.statistics import anova_blocks, block_means, bootstrap_difference, compare_systems, friedman


def test_friedman_is_scipys_for_three_systems_with_ties():
    rng = np.random.default_rng(1)
    matrix = rng.integers(0, 4, size=(12, 3)).astype(float)  # many ties
    chi2, p = friedman(matrix)
    expected = stats.friedmanchisquare(*matrix.T)
    assert chi2 == pytest.approx(expected.statistic) and p == pytest.approx(expected.pvalue)


def test_friedman_with_two_systems_is_the_chi_square_of_the_sign_of_each_block():
    matrix = np.array([[1.0, 2.0], [3.0, 5.0], [2.0, 1.0], [0.0, 4.0], [1.0, 1.5]])
    chi2, p = friedman(matrix)
    # k = 2: chi2 = (wins - losses)^2 / n
    assert chi2 == pytest.approx((4 - 1) ** 2 / 5)
    assert p == pytest.approx(stats.chi2.sf(chi2, 1))


def test_blocked_anova_with_two_systems_is_the_paired_t_squared():
    rng = np.random.default_rng(2)
    matrix = rng.normal(size=(10, 2)) + [0, 0.5]
    f, df1, df2, p = anova_blocks(matrix)
    t = stats.ttest_rel(matrix[:, 1], matrix[:, 0])
    assert (df1, df2) == (1, 9)
    assert f == pytest.approx(t.statistic**2) and p == pytest.approx(t.pvalue)


def test_blocked_anova_matches_the_sums_of_squares_by_hand():
    matrix = np.array([[1.0, 2.0, 4.0], [2.0, 2.5, 3.0], [0.5, 3.0, 3.5], [1.5, 1.0, 4.5]])
    n, k = matrix.shape
    grand = matrix.mean()
    ss_t = n * ((matrix.mean(0) - grand) ** 2).sum()
    ss_b = k * ((matrix.mean(1) - grand) ** 2).sum()
    ss_e = ((matrix - grand) ** 2).sum() - ss_t - ss_b
    f_hand = (ss_t / 2) / (ss_e / 6)
    f, _, _, p = anova_blocks(matrix)
    assert f == pytest.approx(f_hand) and p == pytest.approx(stats.f.sf(f_hand, 2, 6))


def test_compare_systems_runs_scipys_tests_on_the_design():
    rng = np.random.default_rng(3)
    participants = np.repeat([f"P{i}" for i in range(10)], 4)
    systems = np.tile(["A", "A", "B", "B"], 10)
    values = rng.normal(size=40) + (systems == "B") * 0.8
    sessions = compare_systems(values, systems, participants, summary="final", paired=False)
    one_way = stats.f_oneway(values[systems == "A"], values[systems == "B"])
    assert {t.test: t for t in sessions.tests}["one-way ANOVA (sessions)"].p_value == pytest.approx(
        one_way.pvalue
    )
    result = compare_systems(values, systems, participants, summary="final")
    tests = {t.test: t for t in result.tests}
    assert "one-way ANOVA (sessions)" not in tests  # one unit per comparison: the participants' means
    labels, blocks, matrix = block_means(values, systems, participants)
    assert labels == ["A", "B"] and len(blocks) == 10
    assert matrix[0, 0] == pytest.approx(values[:2].mean())
    assert tests["paired t-test (participant means)"].p_value == pytest.approx(
        stats.ttest_rel(matrix[:, 1], matrix[:, 0]).pvalue
    )
    assert tests["Wilcoxon signed-rank (participant means)"].p_value == pytest.approx(
        stats.wilcoxon(matrix[:, 1], matrix[:, 0]).pvalue
    )
    diff = result.differences[0]
    assert diff.mean_difference == pytest.approx((matrix[:, 1] - matrix[:, 0]).mean())
    assert diff.low < diff.mean_difference < diff.high and diff.paired
    assert "B scores" in diff.reading and "higher than A" in diff.reading


def test_bootstrap_intervals_are_seeded_and_cover_the_estimate():
    a = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    b = a + np.array([0.5, 0.7, 0.2, 0.9, 0.4])
    first = bootstrap_difference(a, b, paired=True)
    assert first == bootstrap_difference(a, b, paired=True)
    estimate, low, high = first
    assert estimate == pytest.approx(0.54) and 0.2 <= low <= estimate <= high <= 0.9
    estimate, low, high = bootstrap_difference(a, b, paired=False)
    assert low < 0 < high  # unpaired, the spread of the values swamps the shift


def test_the_readings_say_in_words_whether_a_difference_is_significant():
    systems = np.repeat(["A", "B"], 30)
    participants = np.tile([f"P{i}" for i in range(30)], 2)
    clear = compare_systems(np.r_[np.zeros(30), np.ones(30) + np.linspace(0, 0.1, 30)], systems, participants)
    assert all("is significant at the 5% level" in t.reading for t in clear.tests)
    assert "excludes 0" in clear.differences[0].reading
    rng = np.random.default_rng(4)
    noise = compare_systems(rng.normal(size=60), systems, participants)
    assert (
        "not significant"
        in next(t for t in noise.tests if t.test == "paired t-test (participant means)").reading
    )


def test_unpaired_designs_use_welchs_t_and_one_system_is_only_described():
    rng = np.random.default_rng(5)
    values = rng.normal(size=20)
    systems = np.repeat(["A", "B"], 10)
    result = compare_systems(values, systems, np.arange(20), paired=False)
    welch = next(t for t in result.tests if t.test.startswith("Welch"))
    assert welch.p_value == pytest.approx(stats.ttest_ind(values[10:], values[:10], equal_var=False).pvalue)
    alone = compare_systems(values[:10], systems[:10], np.arange(10))
    assert alone.tests == [] and "nothing to compare" in alone.notes[0]
