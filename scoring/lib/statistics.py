"""Significance tests between systems on per-session values: numpy and scipy only, no Django.

- Friedman (Järvelin & Kekäläinen 2002 tested methods with it on per-topic averages): blocks are the design's
  participants or scenarios, each cell the mean of the block's sessions on a system. Computed here (with the
  tie correction) so that two systems work too; scipy's own needs three.
- ANOVA: one-way over the sessions (scipy.stats.f_oneway) and, as in the 2002 paper, two-way without
  replication on the block means (systems x blocks, the randomized complete block design).
- Paired t-test and Wilcoxon signed-rank for each pair of systems, paired by block: in a within-subject design
  each participant used every system, so their means pair.
- The mean difference of each pair with a bootstrap 95% confidence interval (resampling blocks when paired,
  sessions otherwise; seeded, so the interval is the same every time).
- What reviewers ask for on top: Holm and Benjamini-Hochberg adjusted p-values wherever more than one pair is
  tested (each test's family: its pairs); effect sizes with 95% intervals (Cohen's d_z for the paired t-test,
  rank-biserial r for Wilcoxon, Kendall's W for Friedman); a paired randomization (sign-flip permutation) test;
  and a linear mixed model with crossed random intercepts for participant and scenario (statsmodels MixedLM),
  fitted on the sessions themselves, which is what a within-subject Latin-square design calls for.
Every result carries a plain-words reading and names its unit of averaging; a comparison uses one unit
throughout (sessions when unpaired, the blocks' means when paired), so its means, tests and differences cannot
point in different directions because they averaged different things.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations

import numpy as np
from scipy import optimize, stats

ALPHA = 0.05


@dataclass(frozen=True)
class TestResult:
    test: str
    systems: str  # "all" or "A vs B"
    statistic: float | None
    df: str
    p_value: float | None
    n: int
    reading: str
    # Adjusted for the other pairs of the same test (None when one pair is tested: nothing to adjust).
    p_holm: float | None = None
    p_bh: float | None = None
    effect: Effect | None = None


@dataclass(frozen=True)
class Difference:
    first: str
    second: str
    mean_difference: float  # second minus first
    low: float
    high: float
    n: int
    paired: bool
    reading: str


@dataclass
class Comparison:
    summary: str
    block: str
    means: dict[str, float]
    counts: dict[str, int]
    tests: list[TestResult] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    mixed: MixedModel | None = None


def block_means(values, systems, blocks) -> tuple[list, list, np.ndarray]:
    """(system labels, block labels with every system, (blocks, systems) matrix of means). Blocks missing a
    system are dropped: the Friedman test and the paired tests need complete blocks."""
    values = np.asarray(values, dtype=np.float64)
    systems = np.asarray(systems)
    blocks = np.asarray(blocks)
    system_labels = sorted(set(systems.tolist()), key=str)
    block_labels = sorted(set(blocks.tolist()), key=str)
    s_index = {label: i for i, label in enumerate(system_labels)}
    b_index = {label: i for i, label in enumerate(block_labels)}
    sums = np.zeros((len(block_labels), len(system_labels)))
    counts = np.zeros_like(sums)
    rows = np.fromiter((b_index[b] for b in blocks.tolist()), dtype=np.int64, count=len(blocks))
    cols = np.fromiter((s_index[s] for s in systems.tolist()), dtype=np.int64, count=len(systems))
    np.add.at(sums, (rows, cols), values)
    np.add.at(counts, (rows, cols), 1)
    complete = (counts > 0).all(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums[complete] / counts[complete]
    return system_labels, [b for b, keep in zip(block_labels, complete, strict=True) if keep], means


def friedman(matrix) -> tuple[float, float]:
    """Friedman chi-square (tie-corrected) and p over a (blocks, treatments) matrix; as scipy's
    friedmanchisquare for three or more treatments, and defined for two."""
    data = np.asarray(matrix, dtype=np.float64)
    n, k = data.shape
    ranks = stats.rankdata(data, axis=1)
    rank_sums = ranks.sum(axis=0)
    chi2 = 12.0 / (n * k * (k + 1)) * np.sum(rank_sums**2) - 3.0 * n * (k + 1)
    ties = float(row_ties(data).sum())
    correction = 1.0 - ties / (n * k * (k * k - 1))
    if correction <= 0:
        return 0.0, 1.0
    chi2 /= correction
    return float(chi2), float(stats.chi2.sf(chi2, k - 1))


def row_ties(data: np.ndarray) -> np.ndarray:
    """Each row's tie term, the sum over its groups of equal values of (size^3 - size): for each value, the
    size of its group squared minus one, summed (array work: a loop over 2,500 blocks took a second)."""
    same = (data[:, :, None] == data[:, None, :]).sum(axis=2).astype(np.float64)
    return (same**2 - 1.0).sum(axis=1)


def bootstrap_counts(n: int, resamples: int, rng) -> np.ndarray:
    """(resamples, n) counts of a bootstrap: each row is how often each of the n items is drawn in one resample
    of n draws with replacement (the same as drawing n indices and counting them)."""
    picks = rng.integers(0, n, size=(resamples, n))
    offsets = (np.arange(resamples) * n)[:, None]
    return (
        np.bincount((picks + offsets).ravel(), minlength=resamples * n)
        .reshape(resamples, n)
        .astype(np.float64)
    )


def resample_ranks(counts: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(R, n): the rank each item's copies take in each resample given as counts (ties averaged, as
    scipy.stats.rankdata ranks the drawn values): the number of drawn values below it, plus the middle of the
    drawn values equal to it. No sort per resample: the items are sorted once."""
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    new_group = np.concatenate(([True], sorted_x[1:] != sorted_x[:-1]))
    group = np.empty(len(x), dtype=np.int64)
    group[order] = np.cumsum(new_group) - 1
    per_group = counts[:, order]
    if not new_group.all():  # ties: the copies of equal values form one group
        per_group = np.add.reduceat(per_group, np.flatnonzero(new_group), axis=1)  # (R, G)
    below = np.cumsum(per_group, axis=1) - per_group
    return (below + (per_group + 1.0) / 2.0)[:, group]


def anova_blocks(matrix) -> tuple[float, int, int, float]:
    """Two-way ANOVA without replication (treatments in columns, blocks in rows): F for the treatments,
    its degrees of freedom and p. With two treatments F is the paired t statistic squared."""
    data = np.asarray(matrix, dtype=np.float64)
    n, k = data.shape
    grand = data.mean()
    ss_treat = n * np.sum((data.mean(axis=0) - grand) ** 2)
    ss_block = k * np.sum((data.mean(axis=1) - grand) ** 2)
    ss_error = np.sum((data - grand) ** 2) - ss_treat - ss_block
    df_treat, df_error = k - 1, (k - 1) * (n - 1)
    if df_error <= 0 or ss_error <= 0:
        return float("nan"), df_treat, df_error, float("nan")
    f = (ss_treat / df_treat) / (ss_error / df_error)
    return float(f), df_treat, df_error, float(stats.f.sf(f, df_treat, df_error))


def bootstrap_difference(
    first, second, *, paired: bool, resamples: int = 2000, seed: int = 2008, level: float = 0.95
) -> tuple[float, float, float]:
    """Mean of second minus first with a percentile bootstrap interval. Paired: resample the pairs."""
    a = np.asarray(first, dtype=np.float64)
    b = np.asarray(second, dtype=np.float64)
    rng = np.random.default_rng(seed)
    tail = (1.0 - level) / 2.0 * 100.0
    if paired:
        diffs = b - a
        boot = _resampled_means(rng, diffs, resamples)
        estimate = float(diffs.mean())
    else:
        boot = _resampled_means(rng, b, resamples) - _resampled_means(rng, a, resamples)
        estimate = float(b.mean() - a.mean())
    low, high = np.percentile(boot, [tail, 100.0 - tail])
    return estimate, float(low), float(high)


def _resampled_means(rng, values: np.ndarray, resamples: int) -> np.ndarray:
    """The means of `resamples` resamples of `values` with replacement. The draws are int32 (four times faster
    than int64's) and made a block of resamples at a time, so that 10,000 sessions (the default unit) cost
    about a tenth of a second and a few MB rather than a (2000, n) int64 matrix."""
    n = len(values)
    means = np.empty(resamples)
    step = max(1, (1 << 22) // max(n, 1))
    for start in range(0, resamples, step):
        rows = min(step, resamples - start)
        picks = rng.integers(0, n, size=(rows, n), dtype=np.int32)
        means[start : start + rows] = np.take(values, picks).mean(axis=1)
    return means


# --- multiple comparisons ---------------------------------------------------------------------------------------


def _ranked_p(p_values) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What both adjustments start from: the p-values, an all-NaN result of their shape, and the indices of
    the finite ones in ascending order of p (stable, so ties keep their order). NaN is not a test."""
    p = np.asarray(p_values, dtype=np.float64)
    keep = np.flatnonzero(np.isfinite(p))
    return p, np.full(p.shape, np.nan), keep[np.argsort(p[keep], kind="stable")]


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values (as statsmodels' multipletests(method="holm")). NaN stays NaN and
    does not count as a test."""
    p, out, order = _ranked_p(p_values)
    m = len(order)
    if m:
        stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
        out[order] = np.minimum(stepped, 1.0)
    return out


def benjamini_hochberg(p_values) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values, the false discovery rate (statsmodels' method="fdr_bh")."""
    p, out, order = _ranked_p(p_values)
    m = len(order)
    if m:
        scaled = p[order] * m / np.arange(1, m + 1)
        out[order] = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    return out


def adjust_families(tests: list[TestResult]) -> list[TestResult]:
    """Each test's p adjusted over the pairs of the same test (its family), where a test has more than one pair.
    Tests of all systems at once (Friedman, ANOVA) are one test each and stay as they are."""
    families: dict[str, list[int]] = {}
    for i, t in enumerate(tests):
        if t.systems != "all":
            families.setdefault(t.test, []).append(i)
    out = list(tests)
    for members in families.values():
        if len(members) < 2:
            continue
        p = [np.nan if tests[i].p_value is None else tests[i].p_value for i in members]
        for i, h, b in zip(members, holm(p), benjamini_hochberg(p), strict=True):
            out[i] = replace(
                tests[i], p_holm=None if np.isnan(h) else float(h), p_bh=None if np.isnan(b) else float(b)
            )
    return out


# --- effect sizes -----------------------------------------------------------------------------------------------


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
        interval = "" if not np.isfinite(self.low) else f" [{self.low:.3g}, {self.high:.3g}]"
        return f"{self.name} = {self.value:.3g}{interval}"


def _percentile_interval(boot: np.ndarray, level: float) -> tuple[float, float]:
    boot = boot[np.isfinite(boot)]
    if not len(boot):
        return float("nan"), float("nan")
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(boot, [tail, 100.0 - tail])
    return float(low), float(high)


def _noncentrality_interval(t: float, df: int, level: float) -> tuple[float, float]:
    """The noncentrality parameters whose noncentral t puts the observed t at the interval's quantiles (the
    exact interval for a standardized mean, Steiger & Fouladi 1997). The cdf falls as the noncentrality grows."""

    def solve(q: float) -> float:
        def gap(ncp):
            return stats.nct.cdf(t, df, ncp) - q

        width = 10.0 + abs(t)
        low, high = t - width, t + width
        for _ in range(20):
            if gap(low) > 0 > gap(high):
                return optimize.brentq(gap, low, high, xtol=1e-12)
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
    (T+ + T-), zeros dropped and ties averaged, as the Wilcoxon signed-rank test (scipy's zero_method="wilcox")
    ranks the drawn differences."""
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
    """The matched-pairs rank-biserial correlation (Kerby 2014) of second minus first, the Wilcoxon signed-rank
    test's effect size: from -1 (every pair lower) to 1 (every pair higher). Percentile bootstrap interval,
    resampling the pairs (seeded)."""
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
    low, high = _percentile_interval(boot, level)
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
    low, high = _percentile_interval(_kendalls_w_weighted(ranks, ties, weights), level)
    return Effect("Kendall's W", value, low, high, level, method)


# --- randomization test -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Permutation:
    statistic: float  # mean of second minus first
    p_value: float  # two-sided
    exact: bool
    arrangements: int  # sign patterns enumerated (exact) or drawn (Monte Carlo)


EXACT_UP_TO = 16  # pairs: 2**16 = 65,536 sign patterns enumerated; above, Monte Carlo


def paired_permutation_test(
    first, second, *, resamples: int = 10_000, seed: int = 2008, exact_up_to: int = EXACT_UP_TO
) -> Permutation:
    """Paired randomization test of the mean difference (second minus first): under the null hypothesis each
    pair's two values are exchangeable, so each difference's sign is a coin flip. Exact (every sign pattern)
    up to `exact_up_to` pairs, else `resamples` seeded random patterns. The p-value follows
    scipy.stats.permutation_test(permutation_type="samples"): two-sided is twice the smaller one-sided p,
    capped at 1; a Monte Carlo p counts the observed arrangement, (hits + 1) / (resamples + 1)."""
    d = np.asarray(second, dtype=np.float64) - np.asarray(first, dtype=np.float64)
    n = len(d)
    if n == 0:
        return Permutation(float("nan"), float("nan"), True, 0)
    observed = float(d.mean())
    gamma = abs(1e-14 * observed)  # scipy's relative tolerance for ties with the observed value
    exact = n <= exact_up_to
    less = greater = 0
    if exact:
        total = 1 << n
        bits = (np.arange(total, dtype=np.int64)[:, None] >> np.arange(n)) & 1
        null = ((1 - 2 * bits) * d).mean(axis=1)
        less, greater = int((null <= observed + gamma).sum()), int((null >= observed - gamma).sum())
        adjustment = 0
    else:
        total = resamples
        rng = np.random.default_rng(seed)
        step = max(1, (1 << 22) // n)
        for start in range(0, resamples, step):
            rows = min(step, resamples - start)
            signs = 1.0 - 2.0 * rng.integers(0, 2, size=(rows, n), dtype=np.int8)
            null = (signs * d).mean(axis=1)
            less += int((null <= observed + gamma).sum())
            greater += int((null >= observed - gamma).sum())
        adjustment = 1
    p_less = (less + adjustment) / (total + adjustment)
    p_greater = (greater + adjustment) / (total + adjustment)
    return Permutation(observed, float(min(1.0, 2.0 * min(p_less, p_greater))), exact, total)


# --- linear mixed model -----------------------------------------------------------------------------------------

MIXED_FORMULA = "value ~ C(system)"
MIXED_VARIANCE_COMPONENTS = {"participant": "0 + C(participant)", "scenario": "0 + C(scenario)"}
# statsmodels fits crossed effects as variance components of one group, with dense design matrices: its cost
# grows steeply with the design (on a shared 2-core machine, one BLAS thread: 1.2 s for 800 sessions of 200
# participants, 106 s for 2,000 of 500). Above this many sessions the page says so instead of blocking a request.
MIXED_MAX_SESSIONS = 800
MIXED_WORDS = "value ~ system + (1 | participant) + (1 | scenario)"  # lme4's notation, for the pages


@dataclass(frozen=True)
class MixedEffect:
    first: str  # the reference system
    second: str
    estimate: float  # second minus first, the other effects held
    se: float
    low: float
    high: float
    z: float
    p_value: float
    p_holm: float | None = None
    p_bh: float | None = None


@dataclass
class MixedModel:
    formula: str
    reference: str
    n_sessions: int
    n_participants: int
    n_scenarios: int
    effects: list[MixedEffect] = field(default_factory=list)
    variances: dict[str, float] = field(default_factory=dict)  # participant, scenario, residual
    converged: bool = False
    fitted: bool = False
    notes: list[str] = field(default_factory=list)


def mixed_model(
    values, systems, participants, scenarios, *, level: float = 0.95, max_sessions: int = MIXED_MAX_SESSIONS
) -> MixedModel:
    """The system effect in a linear mixed model of the per-session values, with crossed random intercepts for
    the participant and the scenario:

        value[s] = mu + beta[system(s)] + u[participant(s)] + v[scenario(s)] + e[s],
        u ~ N(0, s2_participant), v ~ N(0, s2_scenario), e ~ N(0, s2_residual),

    fitted by REML with statsmodels as
        smf.mixedlm("value ~ C(system)", data, groups=<one group for all sessions>, re_formula="0",
                    vc_formula={"participant": "0 + C(participant)", "scenario": "0 + C(scenario)"})
    (crossed effects are variance components of a single group: statsmodels' documented way). The first system
    (in code order) is the reference; each other system's coefficient is its difference from it, with a Wald
    interval and p (normal reference, as statsmodels reports them)."""
    import pandas as pd
    import statsmodels.formula.api as smf
    from threadpoolctl import threadpool_limits

    values = np.asarray(values, dtype=np.float64)
    labels = sorted(set(np.asarray(systems).tolist()), key=str)
    result = MixedModel(
        formula=MIXED_WORDS,
        reference=labels[0] if labels else "",
        n_sessions=len(values),
        n_participants=len(set(participants)),
        n_scenarios=len(set(scenarios)),
    )
    if len(labels) < 2:
        result.notes.append("The mixed model needs two systems or more.")
        return result
    if len(values) > max_sessions:
        result.notes.append(
            f"The mixed model is not fitted on {len(values)} sessions (more than {max_sessions}): "
            "statsmodels' crossed random effects grow with the square of the design; filter the "
            "dashboard (by scenario or system) or fit it from the CSV."
        )
        return result
    if result.n_participants < 2 or result.n_scenarios < 2 or len(values) <= len(labels) + 2:
        result.notes.append(
            "The mixed model needs at least two participants, two scenarios and more sessions "
            "than parameters."
        )
        return result
    # Positional codes, not the labels: a code is the study's own text, never part of a formula.
    index = {label: i for i, label in enumerate(labels)}
    data = pd.DataFrame(
        {
            "value": values,
            "system": [f"s{index[s]:04d}" for s in np.asarray(systems).tolist()],
            "participant": pd.factorize(np.asarray(participants))[0],
            "scenario": pd.factorize(np.asarray(scenarios))[0],
            "group": np.zeros(len(values), dtype=np.int64),
        }
    )
    # One BLAS thread: the fit is many small products, and OpenBLAS's threads fighting over busy cores made
    # 400 sessions take 71 s instead of 3 s on a loaded 2-core machine.
    with warnings.catch_warnings(record=True) as caught, threadpool_limits(limits=1, user_api="blas"):
        warnings.simplefilter("always")
        try:
            model = smf.mixedlm(
                MIXED_FORMULA, data, groups="group", re_formula="0", vc_formula=MIXED_VARIANCE_COMPONENTS
            )
            fit = model.fit(reml=True)
        except (np.linalg.LinAlgError, ValueError) as exc:
            result.notes.append(f"The mixed model could not be fitted: {exc}.")
            return result
    result.fitted = True
    result.converged = bool(fit.converged)
    names = list(fit.model.exog_names)
    params, bse = np.asarray(fit.fe_params), np.asarray(fit.bse_fe)
    z_crit = stats.norm.ppf(0.5 + level / 2.0)
    for label in labels[1:]:
        position = names.index(f"C(system)[T.s{index[label]:04d}]")
        estimate, se = float(params[position]), float(bse[position])
        z = estimate / se if se > 0 else float("nan")
        p = float(2.0 * stats.norm.sf(abs(z))) if np.isfinite(z) else float("nan")
        result.effects.append(
            MixedEffect(
                labels[0],
                label,
                estimate,
                se,
                float(estimate - z_crit * se),
                float(estimate + z_crit * se),
                z,
                p,
            )
        )
    if len(result.effects) > 1:
        p = [e.p_value for e in result.effects]
        result.effects = [
            replace(e, p_holm=float(h), p_bh=float(b))
            for e, h, b in zip(result.effects, holm(p), benjamini_hochberg(p), strict=True)
        ]
    vcomp = np.asarray(fit.vcomp)
    vc_names = list(fit.model.exog_vc.names)
    result.variances = {name: float(vcomp[i]) for i, name in enumerate(vc_names)}
    result.variances["residual"] = float(fit.scale)
    messages = sorted({str(w.message).split("\n")[0] for w in caught})
    if not result.converged or messages:
        result.notes.append(
            "statsmodels warned: "
            + "; ".join(messages or ["the fit did not converge"])
            + " (a variance near 0 is the usual cause; the fixed effect is still reported)."
        )
    return result


def p_text(p: float | None) -> str:
    if p is None or not np.isfinite(p):
        return "p not defined"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def verdict(p: float | None) -> str:
    if p is None or not np.isfinite(p):
        return "cannot be tested on these data"
    if p < ALPHA:
        return "is significant at the 5% level"
    return "is not significant at the 5% level (the data do not show a difference)"


def compare_systems(
    values: Sequence[float],
    systems: Sequence,
    blocks: Sequence,
    *,
    summary: str = "value",
    block: str = "participant",
    paired: bool = True,
    resamples: int = 2000,
    design: tuple[Sequence, Sequence] | None = None,
) -> Comparison:
    """Every test of this module for one per-session summary. `systems` and `blocks` label each session.

    One unit of averaging throughout (every test and mean names it): paired, the unit is the block (a
    participant, or a scenario), each block's sessions on a system averaged first, and only blocks that used
    every system kept (Friedman with Kendall's W, two-way ANOVA, paired t with d_z, Wilcoxon with the
    rank-biserial r, the paired permutation test, a bootstrap resampling blocks); unpaired, the unit is the
    session (one-way ANOVA, Welch's t, a bootstrap resampling sessions). With more than one pair, each pairwise
    test's p is also given Holm- and BH-adjusted over its pairs.

    `design` (each session's participant and scenario) adds the linear mixed model, whose unit is the session
    whatever the comparison's: it models the participants' and scenarios' levels instead of averaging them."""
    values = np.asarray(values, dtype=np.float64)
    systems = np.asarray(systems)
    labels = sorted(set(systems.tolist()), key=str)
    if paired:
        system_labels, block_labels, matrix = block_means(values, systems, blocks)
        unit = f"{block} means"
        groups = {label: matrix[:, system_labels.index(label)] for label in labels}
    else:
        unit = "sessions"
        groups = {label: values[systems == label] for label in labels}
    result = Comparison(
        summary=summary,
        block=block,
        means={label: float(group.mean()) if len(group) else float("nan") for label, group in groups.items()},
        counts={label: int(len(group)) for label, group in groups.items()},
    )
    if len(labels) < 2:
        result.notes.append("Only one system has sessions here: there is nothing to compare.")
        return result
    if design is not None:
        result.mixed = mixed_model(values, systems, design[0], design[1])
    if paired and len(block_labels) < 2:
        result.notes.append(
            f"Fewer than two {block}s used every system: no test on {block} means (choose "
            "sessions as the unit for unpaired tests)."
        )
        return result
    if min(len(g) for g in groups.values()) < 2:
        result.notes.append("Some system has fewer than two sessions: the tests need at least two each.")
        return result

    best = max(result.means, key=result.means.get)
    per = (
        f"per {block}, over the {len(block_labels)} {block}s that used every system"
        if paired
        else "per session"
    )
    result.notes.append(
        f"Mean {summary} {per}: "
        + ", ".join(f"{k} {v:.4g} (n={result.counts[k]})" for k, v in result.means.items())
        + f". {best} is highest."
    )
    if not paired:
        f_one, p_one = stats.f_oneway(*groups.values())
        result.tests.append(
            TestResult(
                "one-way ANOVA (sessions)",
                "all",
                float(f_one),
                f"{len(labels) - 1}, {len(values) - len(labels)}",
                float(p_one),
                len(values),
                f"Across sessions, the difference between the systems' means {verdict(p_one)} ({p_text(p_one)}).",
            )
        )
    else:
        chi2, p_fr = friedman(matrix)
        result.tests.append(
            TestResult(
                f"Friedman ({unit})",
                "all",
                chi2,
                str(len(system_labels) - 1),
                p_fr,
                len(block_labels),
                f"Ranking the systems within each {block}, the difference {verdict(p_fr)} ({p_text(p_fr)}, "
                f"{len(block_labels)} {block}s).",
                effect=kendalls_w(matrix, resamples=resamples),
            )
        )
        f_b, df1, df2, p_b = anova_blocks(matrix)
        result.tests.append(
            TestResult(
                f"two-way ANOVA (systems x {block}, {unit})",
                "all",
                f_b,
                f"{df1}, {df2}",
                p_b,
                len(block_labels),
                f"With the {block}s' own level taken out, the difference between systems {verdict(p_b)} "
                f"({p_text(p_b)}).",
            )
        )

    for first, second in combinations(labels, 2):
        pair = f"{first} vs {second}"
        a, b = groups[first], groups[second]
        if paired:
            t, p_t = stats.ttest_rel(b, a)
            result.tests.append(
                TestResult(
                    f"paired t-test ({unit})",
                    pair,
                    float(t),
                    str(len(a) - 1),
                    float(p_t),
                    len(a),
                    f"Paired by {block}, {second} minus {first} {verdict(p_t)} ({p_text(p_t)}).",
                    effect=cohens_dz(a, b),
                )
            )
            if np.any(b - a != 0):
                w, p_w = stats.wilcoxon(b, a)
                result.tests.append(
                    TestResult(
                        f"Wilcoxon signed-rank ({unit})",
                        pair,
                        float(w),
                        "",
                        float(p_w),
                        len(a),
                        f"Without assuming normal differences, {second} against {first} {verdict(p_w)} "
                        f"({p_text(p_w)}).",
                        effect=rank_biserial(a, b, resamples=resamples),
                    )
                )
            perm = paired_permutation_test(a, b)
            how = (
                f"exact, all {perm.arrangements} sign patterns"
                if perm.exact
                else f"Monte Carlo, {perm.arrangements} seeded sign patterns"
            )
            result.tests.append(
                TestResult(
                    f"paired permutation test ({unit})",
                    pair,
                    perm.statistic,
                    how,
                    perm.p_value,
                    len(a),
                    f"Flipping the sign of each {block}'s difference at random ({how}), {second} minus {first} "
                    f"{verdict(perm.p_value)} ({p_text(perm.p_value)}).",
                )
            )
        else:
            t, p_t = stats.ttest_ind(b, a, equal_var=False)
            result.tests.append(
                TestResult(
                    "Welch t-test (sessions, unpaired)",
                    pair,
                    float(t),
                    "",
                    float(p_t),
                    len(a) + len(b),
                    f"Unpaired, {second} minus {first} {verdict(p_t)} ({p_text(p_t)}).",
                )
            )
        estimate, low, high = bootstrap_difference(a, b, paired=paired, resamples=resamples)
        direction = "higher" if estimate > 0 else "lower"
        covers = low <= 0 <= high
        reading = (
            f"{second} scores {abs(estimate):.4g} {direction} than {first} on {summary} on average over {unit} "
            f"(95% bootstrap CI {low:.4g} to {high:.4g}); "
            + (
                "the interval includes 0, so the data are consistent with no difference."
                if covers
                else "the interval excludes 0."
            )
        )
        result.differences.append(Difference(first, second, estimate, low, high, len(a), paired, reading))
    result.tests = adjust_families(result.tests)
    return result
