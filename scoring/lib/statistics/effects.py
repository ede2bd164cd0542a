"""Effect sizes with 95% intervals, one for each test that reviewers ask it of:

- Cohen's d_z (paired t-test): mean(d) / sd(d) of the paired differences; exact interval by inverting the
  noncentral t (Steiger & Fouladi 1997).
- Matched-pairs rank-biserial r (Wilcoxon signed-rank, Kerby 2014): (T+ - T-) / (T+ + T-).
- Kendall's W (Friedman): chi2_F / (n (k - 1)).
The last two take a seeded percentile bootstrap interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from ..number_text import number_text
from .blocks import row_ties
from .bootstrap import bootstrap_counts, percentile_interval, resample_ranks


@dataclass(frozen=True)
class Effect:
    name: str  # "Cohen's d_z", "rank-biserial r", "Kendall's W"
    value: float
    low: float
    high: float
    level: float
    method: str  # how the interval was found

    def text(self) -> str:
        if not np.isfinite(self.value):
            return f"{self.name} not defined"
        interval = (
            ""
            if not np.isfinite(self.low)
            else f" [{number_text(self.low, '.3g')}, {number_text(self.high, '.3g')}]"
        )
        return f"{self.name} = {number_text(self.value, '.3g')}{interval}"


def _noncentrality_interval(t: float, df: int, level: float) -> tuple[float, float]:
    """The noncentrality parameters whose noncentral t puts the observed t at the interval's quantiles (the
    exact interval for a standardized mean, Steiger & Fouladi 1997). The cdf falls as the noncentrality
    grows."""

    def solve(q: float) -> float:
        def gap(ncp):
            return stats.nct.cdf(t, df, ncp) - q

        width = 10.0 + abs(t)
        low, high = t - width, t + width
        for _ in range(20):
            if gap(low) > 0 > gap(high):
                try:
                    return optimize.brentq(gap, low, high, xtol=1e-12)
                except ValueError:  # scipy's noncentral t is NaN somewhere between (a huge t): no bound
                    return float("nan")
            width *= 2
            low, high = t - width, t + width
        return float("nan")

    return solve((1.0 + level) / 2.0), solve((1.0 - level) / 2.0)


def cohens_dz(first, second, *, level: float = 0.95) -> Effect:
    """Cohen's d_z of the paired differences (second minus first): their mean over their standard deviation,
    so that the paired t statistic is d_z * sqrt(n). Interval: exact, by inverting the noncentral t."""
    d = np.asarray(second, dtype=np.float64) - np.asarray(first, dtype=np.float64)
    n = len(d)
    sd = float(d.std(ddof=1)) if n > 1 else 0.0
    method = "noncentral t"
    if sd == 0.0:
        return Effect("Cohen's d_z", float("nan"), float("nan"), float("nan"), level, method)
    dz = float(d.mean() / sd)
    with np.errstate(all="ignore"):
        low, high = _noncentrality_interval(dz * np.sqrt(n), n - 1, level)
    return Effect("Cohen's d_z", dz, float(low / np.sqrt(n)), float(high / np.sqrt(n)), level, method)


def _rank_biserial_counts(d: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Matched-pairs rank-biserial r of each resample given as counts of the differences `d`: (T+ - T-) /
    (T+ + T-), zeros dropped and ties averaged, as the Wilcoxon signed-rank test (scipy's
    zero_method="wilcox") ranks the drawn differences."""
    nonzero = d != 0
    d, counts = d[nonzero], counts[:, nonzero]
    if not len(d):
        return np.full(len(counts), np.nan)
    ranks = resample_ranks(counts, np.abs(d))
    signed = counts * ranks * np.sign(d)
    total = (counts * ranks).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, signed.sum(axis=1) / total, np.nan)


def rank_biserial(first, second, *, level: float = 0.95, resamples: int = 2000, seed: int = 2008) -> Effect:
    """The matched-pairs rank-biserial correlation (Kerby 2014) of second minus first, the Wilcoxon
    signed-rank test's effect size: from -1 (every pair lower) to 1 (every pair higher). Percentile
    bootstrap interval, resampling the pairs (seeded)."""
    d = np.asarray(second, dtype=np.float64) - np.asarray(first, dtype=np.float64)
    value = float(_rank_biserial_counts(d, np.ones((1, len(d))))[0]) if len(d) else float("nan")
    method = f"percentile bootstrap, {resamples} resamples of the pairs"
    if not len(d) or not np.isfinite(value):
        return Effect("rank-biserial r", value, float("nan"), float("nan"), level, method)
    rng = np.random.default_rng(seed)
    step = max(1, (1 << 21) // len(d))
    boot = np.concatenate(
        [
            _rank_biserial_counts(d, bootstrap_counts(len(d), min(step, resamples - start), rng))
            for start in range(0, resamples, step)
        ]
    )
    low, high = percentile_interval(boot, level)
    return Effect("rank-biserial r", value, low, high, level, method)


def _kendalls_w_weighted(ranks: np.ndarray, ties: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Kendall's W (tie-corrected) of resamples given as counts of each block (weights: (R, n))."""
    n = weights.sum(axis=1)
    k = ranks.shape[1]
    rank_sums = weights @ ranks  # (R, k)
    chi2 = 12.0 / (n * k * (k + 1)) * np.sum(rank_sums**2, axis=1) - 3.0 * n * (k + 1)
    correction = 1.0 - (weights @ ties) / (n * k * (k * k - 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(correction > 0, chi2 / correction / (n * (k - 1)), np.nan)


def kendalls_w(matrix, *, level: float = 0.95, resamples: int = 2000, seed: int = 2008) -> Effect:
    """Kendall's coefficient of concordance over a (blocks, systems) matrix, the Friedman test's effect size:
    W = chi2_F / (n (k - 1)), 0 (no agreement of the blocks on an order) to 1 (every block orders the
    systems the same way); tie-corrected as `friedman`. Percentile bootstrap interval resampling blocks."""
    data = np.asarray(matrix, dtype=np.float64)
    n, k = data.shape
    method = f"percentile bootstrap, {resamples} resamples of the blocks"
    if n < 1 or k < 2:
        return Effect("Kendall's W", float("nan"), float("nan"), float("nan"), level, method)
    ranks = stats.rankdata(data, axis=1)
    ties = row_ties(data)
    value = float(_kendalls_w_weighted(ranks, ties, np.ones((1, n)))[0])
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n, np.full(n, 1.0 / n), size=resamples).astype(np.float64)
    low, high = percentile_interval(_kendalls_w_weighted(ranks, ties, weights), level)
    return Effect("Kendall's W", value, low, high, level, method)
