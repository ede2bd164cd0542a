"""scoring/lib/meta_evaluation.py against scipy: the correlations, their p-values and bootstrap intervals, the
adjusted p-values (statsmodels) and the system rankings' Kendall tau. No database."""

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from scoring.lib.meta_evaluation import (
    ALL_SYSTEMS,
    bootstrap_counts,
    meta_evaluate,
    resample_ranks,
    unit_means,
    weighted_pearson,
    weighted_spearman,
)


def _study(seed=1, n=60):
    """Sessions on systems A, B, C: a 1-5 rating that follows one measure and not another, with ties."""
    rng = np.random.default_rng(seed)
    systems = np.array(["A", "B", "C"])[rng.integers(0, 3, n)]
    quality = rng.normal(size=n) + (systems == "C") * 0.8 - (systems == "A") * 0.5
    rating = np.clip(np.round(3 + quality + rng.normal(0, 0.7, n)), 1, 5)
    measures = {
        "good": quality + rng.normal(0, 0.3, n),
        "noise": rng.normal(size=n),
        "coarse": np.round(quality),  # many ties
    }
    return measures, {"went_well": rating}, list(systems)


def test_the_weighted_resample_statistics_are_scipys_on_the_drawn_sessions():
    measures, ratings, _ = _study()
    x, y = measures["coarse"], ratings["went_well"]
    counts = bootstrap_counts(len(x), 25, np.random.default_rng(3))
    assert (counts.sum(axis=1) == len(x)).all()
    pearson = weighted_pearson(counts, x, y)
    spearman = weighted_spearman(counts, x, y)
    for row in range(25):
        drawn = np.repeat(np.arange(len(x)), counts[row].astype(int))
        assert pearson[row] == pytest.approx(stats.pearsonr(x[drawn], y[drawn]).statistic, abs=1e-12)
        assert spearman[row] == pytest.approx(stats.spearmanr(x[drawn], y[drawn]).statistic, abs=1e-12)
        ranks = resample_ranks(counts[row : row + 1], x)[0]
        assert ranks[drawn] == pytest.approx(stats.rankdata(x[drawn]))


def test_each_correlation_is_scipys_with_its_p_and_a_seeded_bootstrap_interval():
    measures, ratings, systems = _study()
    result = meta_evaluate(measures, ratings, systems, resamples=1000)
    assert result == meta_evaluate(measures, ratings, systems, resamples=1000)  # seeded
    rows = {(a.scope, a.measure, a.coefficient): a for a in result.correlations}
    assert len(rows) == 4 * 3 * 2  # all systems and A, B, C; three measures; two coefficients
    y = ratings["went_well"]
    for (scope, measure, coefficient), row in rows.items():
        keep = np.ones(len(y), bool) if scope == ALL_SYSTEMS else np.asarray(systems) == scope
        x = measures[measure][keep]
        expected = (stats.pearsonr if coefficient == "pearson" else stats.spearmanr)(x, y[keep])
        assert row.n == keep.sum()
        assert row.value == pytest.approx(expected.statistic, abs=1e-12)
        assert row.p_value == pytest.approx(expected.pvalue, rel=1e-9)
        assert row.low <= row.value <= row.high
    good = rows[(ALL_SYSTEMS, "good", "pearson")]
    noise = rows[(ALL_SYSTEMS, "noise", "pearson")]
    assert good.low > 0.3 and noise.low < 0 < noise.high


def test_the_interval_is_scipys_bootstrap_within_monte_carlo_error():
    measures, ratings, systems = _study(seed=2, n=80)
    x, y = measures["good"], ratings["went_well"]
    row = next(
        a
        for a in meta_evaluate({"good": x}, ratings, systems, resamples=4000).correlations
        if a.scope == ALL_SYSTEMS and a.coefficient == "spearman"
    )

    def rho(a, b):
        return stats.spearmanr(a, b).statistic

    reference = stats.bootstrap(
        (x, y),
        rho,
        paired=True,
        vectorized=False,
        n_resamples=4000,
        method="percentile",
        rng=np.random.default_rng(5),
    ).confidence_interval
    assert row.low == pytest.approx(reference.low, abs=0.03)
    assert row.high == pytest.approx(reference.high, abs=0.03)


def test_holm_and_bh_adjust_over_one_scope_and_coefficient():
    measures, ratings, systems = _study()
    ratings = {**ratings, "effort": -ratings["went_well"] + np.random.default_rng(9).normal(0, 1, 60)}
    result = meta_evaluate(measures, ratings, systems, resamples=200)
    for scope in (ALL_SYSTEMS, "B"):
        for coefficient in ("pearson", "spearman"):
            family = [a for a in result.correlations if a.scope == scope and a.coefficient == coefficient]
            assert len(family) == 6
            raw = [a.p_value for a in family]
            assert [a.p_holm for a in family] == pytest.approx(list(multipletests(raw, method="holm")[1]))
            assert [a.p_bh for a in family] == pytest.approx(list(multipletests(raw, method="fdr_bh")[1]))


def test_unanswered_ratings_are_left_out_pairwise():
    measures, ratings, systems = _study()
    y = ratings["went_well"].copy()
    y[:7] = np.nan
    row = next(
        a
        for a in meta_evaluate(measures, {"went_well": y}, systems, resamples=200).correlations
        if a.scope == ALL_SYSTEMS and a.measure == "good" and a.coefficient == "pearson"
    )
    assert row.n == 53
    assert row.value == pytest.approx(stats.pearsonr(measures["good"][7:], y[7:]).statistic)


def test_a_constant_measure_has_no_correlation_and_says_so():
    measures, ratings, systems = _study()
    result = meta_evaluate({"flat": np.ones(60)}, ratings, systems, resamples=100)
    assert all(np.isnan(a.value) and np.isnan(a.low) for a in result.correlations)
    assert any("does not vary" in note for note in result.notes)


def test_the_system_rankings_are_compared_by_kendalls_tau():
    measures, ratings, systems = _study()
    result = meta_evaluate(measures, ratings, systems, resamples=100)
    s = np.asarray(systems)
    means = {
        name: [values[s == label].mean() for label in "ABC"]
        for name, values in {**measures, "rating: went_well": ratings["went_well"]}.items()
    }
    for name, per_system in result.system_means.items():
        assert [per_system[label] for label in "ABC"] == pytest.approx(means[name])
    pairs = {(r.first, r.second): r for r in result.rankings}
    assert len(pairs) == 6  # four rankers
    expected = stats.kendalltau(means["good"], means["rating: went_well"])
    assert pairs[("good", "rating: went_well")].tau == pytest.approx(expected.statistic)
    assert pairs[("good", "rating: went_well")].p_value == pytest.approx(expected.pvalue)
    assert pairs[("good", "noise")].systems == 3


def test_unit_means_average_each_units_sessions_on_a_system():
    values = {"m": np.array([1.0, 3.0, 5.0, 7.0]), "r": np.array([np.nan, 4.0, 2.0, np.nan])}
    out, systems = unit_means(values, ["A", "A", "B", "B"], ["P1", "P1", "P1", "P2"])
    assert systems == ["A", "B", "B"]
    assert out["m"] == pytest.approx([2.0, 5.0, 7.0])
    assert out["r"][:2] == pytest.approx([4.0, 2.0]) and np.isnan(out["r"][2])


def test_the_blocked_bootstrap_is_the_weighted_statistics_on_the_same_draws():
    from scoring.lib.meta_evaluation import BLOCK, _bootstrap

    measures, ratings, _ = _study(seed=4, n=50)
    keep = np.ones(50, bool)
    keep[:5] = False
    boots = _bootstrap(measures, list(measures), ratings["went_well"], keep, BLOCK + 30, 7)
    rng = np.random.default_rng(7)
    counts = np.vstack([bootstrap_counts(45, BLOCK, rng), bootstrap_counts(45, 30, rng)])
    y = ratings["went_well"][keep]
    for name, values in measures.items():
        x = values[keep]
        np.testing.assert_allclose(boots[(name, "pearson")], weighted_pearson(counts, x, y), atol=1e-10)
        np.testing.assert_allclose(boots[(name, "spearman")], weighted_spearman(counts, x, y), atol=1e-10)
