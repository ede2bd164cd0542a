"""The statistics reviewers ask for (scoring/lib/statistics.py), each figure against the library that defines
it: statsmodels' multipletests and MixedLM, scipy's permutation_test,
ttest_rel, wilcoxon, friedmanchisquare and noncentral t. No database."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.regression.mixed_linear_model import MixedLM, VCSpec
from statsmodels.stats.multitest import multipletests

from scoring.lib.statistics import (
    benjamini_hochberg,
    cohens_dz,
    compare_systems,
    holm,
    kendalls_w,
    mixed_model,
    paired_permutation_test,
    rank_biserial,
)


def _mean_difference(x, y, axis):
    return np.mean(y - x, axis=axis)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_holm_and_bh_are_statsmodels_multipletests(seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=11) ** 3
    p[4] = p[7]  # a tie
    assert holm(p) == pytest.approx(multipletests(p, method="holm")[1], abs=1e-15)
    assert benjamini_hochberg(p) == pytest.approx(multipletests(p, method="fdr_bh")[1], abs=1e-15)


def test_an_undefined_p_is_not_counted_as_a_test():
    p = np.array([0.01, np.nan, 0.04, 0.03])
    kept = p[[0, 2, 3]]
    adjusted = holm(p)
    assert np.isnan(adjusted[1])
    assert adjusted[[0, 2, 3]] == pytest.approx(multipletests(kept, method="holm")[1])
    assert benjamini_hochberg(p)[[0, 2, 3]] == pytest.approx(multipletests(kept, method="fdr_bh")[1])


def test_cohens_dz_is_the_paired_t_over_root_n_with_the_noncentral_t_interval():
    rng = np.random.default_rng(3)
    a = rng.normal(size=15)
    b = a + rng.normal(0.6, 1.0, size=15)
    effect = cohens_dz(a, b)
    t = stats.ttest_rel(b, a).statistic
    assert effect.value == pytest.approx(t / np.sqrt(15))
    # The interval's ends are the noncentralities that put the observed t at the 97.5% and 2.5% quantiles.
    assert stats.nct.cdf(t, 14, effect.low * np.sqrt(15)) == pytest.approx(0.975, abs=1e-9)
    assert stats.nct.cdf(t, 14, effect.high * np.sqrt(15)) == pytest.approx(0.025, abs=1e-9)
    assert effect.low < effect.value < effect.high


def test_cohens_dz_of_identical_pairs_is_not_defined():
    effect = cohens_dz([1.0, 2.0, 3.0], [1.5, 2.5, 3.5])  # constant difference: sd 0
    assert np.isnan(effect.value) and "not defined" in effect.text()


@pytest.mark.parametrize("seed", [4, 5])
def test_rank_biserial_is_the_wilcoxon_rank_sums_scaled(seed):
    rng = np.random.default_rng(seed)
    a = np.round(rng.normal(size=20), 1)
    b = np.round(a + rng.normal(0.3, 1.0, size=20), 1)
    b[:3] = a[:3]  # zero differences are dropped, as the test does
    effect = rank_biserial(a, b)
    d = b - a
    n = int((d != 0).sum())
    t_plus = stats.wilcoxon(b, a, alternative="greater").statistic  # the sum of positive ranks
    assert effect.value == pytest.approx(2 * t_plus / (n * (n + 1) / 2) - 1)
    assert effect.low <= effect.value <= effect.high
    assert effect == rank_biserial(a, b)  # seeded


def test_the_rank_biserial_interval_is_the_bootstrap_of_the_pairs():
    rng = np.random.default_rng(6)
    a = rng.normal(size=25)
    b = a + rng.normal(0.4, 1.0, size=25)
    effect = rank_biserial(a, b, resamples=4000)

    def r(x, y):
        d = y - x
        d = d[d != 0]
        t_plus = stats.wilcoxon(d, alternative="greater").statistic
        return 2 * t_plus / (len(d) * (len(d) + 1) / 2) - 1

    reference = stats.bootstrap(
        (a, b),
        r,
        paired=True,
        vectorized=False,
        n_resamples=4000,
        method="percentile",
        rng=np.random.default_rng(1),
    ).confidence_interval
    assert effect.low == pytest.approx(reference.low, abs=0.06)
    assert effect.high == pytest.approx(reference.high, abs=0.06)


def test_kendalls_w_is_friedmans_chi_square_over_n_k_minus_1():
    rng = np.random.default_rng(7)
    matrix = rng.integers(0, 4, size=(14, 3)).astype(float)  # ties in many rows
    effect = kendalls_w(matrix)
    chi2 = stats.friedmanchisquare(*matrix.T).statistic
    assert effect.value == pytest.approx(chi2 / (14 * 2))
    assert 0 <= effect.low <= effect.value <= effect.high <= 1


def test_kendalls_w_without_ties_is_the_textbook_formula():
    matrix = np.array(
        [[1.0, 2.0, 3.0, 4.0], [2.0, 1.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0], [1.0, 2.0, 4.0, 3.0]]
    )
    n, k = matrix.shape
    sums = stats.rankdata(matrix, axis=1).sum(axis=0)
    s = ((sums - sums.mean()) ** 2).sum()
    assert kendalls_w(matrix).value == pytest.approx(12 * s / (n**2 * (k**3 - k)))
    assert kendalls_w(np.tile([1.0, 2.0, 3.0], (6, 1))).value == pytest.approx(1.0)


@pytest.mark.parametrize("n", [6, 11, 16])
def test_the_exact_permutation_test_is_scipys(n):
    rng = np.random.default_rng(n)
    a = rng.normal(size=n)
    b = a + rng.normal(0.4, 1.0, size=n)
    mine = paired_permutation_test(a, b)
    theirs = stats.permutation_test(
        (a, b), _mean_difference, permutation_type="samples", vectorized=True, n_resamples=np.inf
    )
    assert mine.exact and mine.arrangements == 2**n
    assert mine.statistic == pytest.approx(theirs.statistic)
    assert mine.p_value == pytest.approx(theirs.pvalue, abs=1e-12)


def test_the_exact_permutation_test_with_ties_and_zero_differences():
    a = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    b = a + np.array([0.5, -0.5, 0.5, 0.0, 1.0, 0.5, -1.0, 0.5])
    theirs = stats.permutation_test(
        (a, b), _mean_difference, permutation_type="samples", vectorized=True, n_resamples=np.inf
    )
    assert paired_permutation_test(a, b).p_value == pytest.approx(theirs.pvalue, abs=1e-12)


def test_the_monte_carlo_permutation_test_is_seeded_and_near_the_exact_p():
    rng = np.random.default_rng(8)
    a = rng.normal(size=18)
    b = a + rng.normal(0.45, 1.0, size=18)
    exact = stats.permutation_test(
        (a, b), _mean_difference, permutation_type="samples", vectorized=True, n_resamples=np.inf
    ).pvalue
    mine = paired_permutation_test(a, b, exact_up_to=10, resamples=20_000)
    assert not mine.exact and mine.arrangements == 20_000
    assert mine == paired_permutation_test(a, b, exact_up_to=10, resamples=20_000)
    # Three standard errors of a Monte Carlo p of 20,000 draws: two-sided is twice a one-sided p of exact / 2.
    one_sided = exact / 2
    assert mine.p_value == pytest.approx(exact, abs=3 * 2 * np.sqrt(one_sided * (1 - one_sided) / 20_000))
    theirs = stats.permutation_test(
        (a, b),
        _mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=20_000,
        rng=np.random.default_rng(1),
    ).pvalue
    assert mine.p_value == pytest.approx(theirs, abs=0.02)


def _latin_square(participants, seed, effect=0.5):
    """A within-subject Latin square: each participant works four scenarios, systems alternating."""
    rng = np.random.default_rng(seed)
    who = np.repeat(np.arange(participants), 4)
    scenario = np.tile(np.arange(4), participants)
    system = np.where((who + scenario) % 2 == 1, "B", "A")
    values = (
        1.0
        + effect * (system == "B")
        + rng.normal(0, 0.6, participants)[who]
        + rng.normal(0, 0.3, 4)[scenario]
        + rng.normal(0, 0.5, len(who))
    )
    return values, system, [f"P{p}" for p in who], [f"S{s}" for s in scenario]


def test_the_mixed_model_is_statsmodels_mixedlm_with_crossed_variance_components():
    values, system, participant, scenario = _latin_square(16, 9)
    result = mixed_model(values, system, participant, scenario)
    assert result.fitted and result.reference == "A" and len(result.effects) == 1
    # The same model built without formulas: one group, participant and scenario as dummy variance components.
    n = len(values)
    p_codes, p_names = pd.factorize(np.asarray(participant))
    s_codes, s_names = pd.factorize(np.asarray(scenario))
    exog = np.column_stack([np.ones(n), (np.asarray(system) == "B").astype(float)])
    vc = VCSpec(
        ["participant", "scenario"],
        [list(p_names), list(s_names)],
        [[np.eye(len(p_names))[p_codes]], [np.eye(len(s_names))[s_codes]]],
    )
    fit = MixedLM(values, exog, groups=np.zeros(n), exog_vc=vc).fit(reml=True)
    effect = result.effects[0]
    assert effect.estimate == pytest.approx(fit.fe_params[1], rel=1e-4)
    assert effect.se == pytest.approx(fit.bse_fe[1], rel=1e-3)
    assert effect.p_value == pytest.approx(fit.pvalues[1], rel=1e-3)
    low, high = fit.conf_int()[1]
    assert (effect.low, effect.high) == (pytest.approx(low, rel=1e-3), pytest.approx(high, rel=1e-3))
    assert result.variances["participant"] == pytest.approx(fit.vcomp[0], rel=1e-3)
    assert result.variances["scenario"] == pytest.approx(fit.vcomp[1], rel=1e-3)
    assert result.variances["residual"] == pytest.approx(fit.scale, rel=1e-3)


def test_on_a_balanced_latin_square_the_system_effect_is_the_within_participant_difference():
    # Each participant has two sessions per system: the GLS estimate is the mean of the paired differences.
    values, system, participant, scenario = _latin_square(12, 10)
    effect = mixed_model(values, system, participant, scenario).effects[0]
    blocks = compare_systems(values, system, participant)
    assert effect.estimate == pytest.approx(blocks.differences[0].mean_difference, rel=1e-6)


def test_the_mixed_model_says_why_it_is_not_fitted():
    values, system, participant, scenario = _latin_square(8, 11)
    big = mixed_model(values, system, participant, scenario, max_sessions=20)
    assert not big.fitted and "more than 20" in big.notes[0]
    one = mixed_model(values, ["A"] * len(values), participant, scenario)
    assert not one.fitted and "two systems" in one.notes[0]


def test_compare_systems_adjusts_each_pairwise_family_and_carries_effects():
    rng = np.random.default_rng(12)
    participants = np.repeat([f"P{i}" for i in range(10)], 3)
    systems = np.tile(["A", "B", "C"], 10)
    values = rng.normal(size=30) + (systems == "C") * 0.9
    result = compare_systems(values, systems, participants, summary="final")
    for name in (
        "paired t-test (participant means)",
        "Wilcoxon signed-rank (participant means)",
        "paired permutation test (participant means)",
    ):
        family = [t for t in result.tests if t.test == name]
        assert [t.systems for t in family] == ["A vs B", "A vs C", "B vs C"]
        raw = [t.p_value for t in family]
        assert [t.p_holm for t in family] == pytest.approx(list(multipletests(raw, method="holm")[1]))
        assert [t.p_bh for t in family] == pytest.approx(list(multipletests(raw, method="fdr_bh")[1]))
    tests = {(t.test, t.systems): t for t in result.tests}
    friedman = tests[("Friedman (participant means)", "all")]
    assert friedman.p_holm is None and friedman.effect.name == "Kendall's W"
    assert friedman.effect.value == pytest.approx(friedman.statistic / (10 * 2))
    _, _, matrix = __import__("scoring.lib.statistics", fromlist=["block_means"]).block_means(
        values, systems, participants
    )
    t_ac = tests[("paired t-test (participant means)", "A vs C")]
    assert t_ac.effect.value == pytest.approx(
        stats.ttest_rel(matrix[:, 2], matrix[:, 0]).statistic / np.sqrt(10)
    )
    perm = tests[("paired permutation test (participant means)", "A vs C")]
    exact = stats.permutation_test(
        (matrix[:, 0], matrix[:, 2]),
        _mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,
    )
    assert perm.p_value == pytest.approx(exact.pvalue) and "exact" in perm.df


def test_one_pair_is_not_adjusted():
    rng = np.random.default_rng(13)
    participants = np.repeat([f"P{i}" for i in range(8)], 2)
    systems = np.tile(["A", "B"], 8)
    result = compare_systems(rng.normal(size=16), systems, participants)
    assert all(t.p_holm is None and t.p_bh is None for t in result.tests)


def test_compare_systems_fits_the_mixed_model_on_the_sessions_when_given_the_design():
    values, system, participant, scenario = _latin_square(10, 14)
    result = compare_systems(values, system, participant, design=(participant, scenario))
    assert result.mixed is not None and result.mixed.fitted
    assert result.mixed.effects[0].estimate == pytest.approx(
        mixed_model(values, system, participant, scenario).effects[0].estimate
    )
    assert compare_systems(values, system, participant).mixed is None


def test_cohens_dz_of_a_huge_paired_t_has_no_interval_rather_than_an_error():
    # Conclusion-change page met these block means: scipy's noncentral t turns NaN on the way to
    # the bound, which stopped brentq with a ValueError (a 500).
    first = [169.3426403617271, 144.3426403617271, 144.3426403617271, 125.0] + [
        169.3426403617271,
        144.3426403617271,
    ] * 2
    effect = cohens_dz(first, [0.0] * 8)
    assert effect.value < -5 and (np.isnan(effect.low) or effect.low < effect.value)
