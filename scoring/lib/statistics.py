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
Every result carries a plain-words reading and names its unit of averaging; a comparison uses one unit
throughout (sessions when unpaired, the blocks' means when paired), so its means, tests and differences cannot
point in different directions because they averaged different things.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from scipy import stats

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
    ranks = np.apply_along_axis(stats.rankdata, 1, data)
    rank_sums = ranks.sum(axis=0)
    chi2 = 12.0 / (n * k * (k + 1)) * np.sum(rank_sums**2) - 3.0 * n * (k + 1)
    ties = 0.0
    for row in data:
        _, counts = np.unique(row, return_counts=True)
        ties += np.sum(counts**3 - counts)
    correction = 1.0 - ties / (n * k * (k * k - 1))
    if correction <= 0:
        return 0.0, 1.0
    chi2 /= correction
    return float(chi2), float(stats.chi2.sf(chi2, k - 1))


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


def bootstrap_difference(first, second, *, paired: bool, resamples: int = 2000, seed: int = 2008,
                         level: float = 0.95) -> tuple[float, float, float]:
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


def _p_text(p: float | None) -> str:
    if p is None or not np.isfinite(p):
        return "p not defined"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _verdict(p: float | None) -> str:
    if p is None or not np.isfinite(p):
        return "cannot be tested on these data"
    if p < ALPHA:
        return "is significant at the 5% level"
    return "is not significant at the 5% level (the data do not show a difference)"


def compare_systems(values: Sequence[float], systems: Sequence, blocks: Sequence, *, summary: str = "value",
                    block: str = "participant", paired: bool = True, resamples: int = 2000) -> Comparison:
    """Every test of this module for one per-session summary. `systems` and `blocks` label each session.

    One unit of averaging throughout (every test and mean names it): paired, the unit is the block (a
    participant, or a scenario), each block's sessions on a system averaged first, and only blocks that used
    every system kept (Friedman, two-way ANOVA, paired t, Wilcoxon, a bootstrap resampling blocks); unpaired,
    the unit is the session (one-way ANOVA, Welch's t, a bootstrap resampling sessions)."""
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
        summary=summary, block=block,
        means={label: float(group.mean()) if len(group) else float("nan") for label, group in groups.items()},
        counts={label: int(len(group)) for label, group in groups.items()},
    )
    if len(labels) < 2:
        result.notes.append("Only one system has sessions here: there is nothing to compare.")
        return result
    if paired and len(block_labels) < 2:
        result.notes.append(f"Fewer than two {block}s used every system: no test on {block} means (choose "
                            "sessions as the unit for unpaired tests).")
        return result
    if min(len(g) for g in groups.values()) < 2:
        result.notes.append("Some system has fewer than two sessions: the tests need at least two each.")
        return result

    best = max(result.means, key=result.means.get)
    per = f"per {block}, over the {len(block_labels)} {block}s that used every system" if paired else "per session"
    result.notes.append(
        f"Mean {summary} {per}: " + ", ".join(f"{k} {v:.4g} (n={result.counts[k]})" for k, v in result.means.items())
        + f". {best} is highest."
    )
    if not paired:
        f_one, p_one = stats.f_oneway(*groups.values())
        result.tests.append(TestResult(
            "one-way ANOVA (sessions)", "all", float(f_one), f"{len(labels) - 1}, {len(values) - len(labels)}",
            float(p_one), len(values),
            f"Across sessions, the difference between the systems' means {_verdict(p_one)} ({_p_text(p_one)}).",
        ))
    else:
        chi2, p_fr = friedman(matrix)
        result.tests.append(TestResult(
            f"Friedman ({unit})", "all", chi2, str(len(system_labels) - 1), p_fr, len(block_labels),
            f"Ranking the systems within each {block}, the difference {_verdict(p_fr)} ({_p_text(p_fr)}, "
            f"{len(block_labels)} {block}s).",
        ))
        f_b, df1, df2, p_b = anova_blocks(matrix)
        result.tests.append(TestResult(
            f"two-way ANOVA (systems x {block}, {unit})", "all", f_b, f"{df1}, {df2}", p_b, len(block_labels),
            f"With the {block}s' own level taken out, the difference between systems {_verdict(p_b)} "
            f"({_p_text(p_b)}).",
        ))

    for first, second in combinations(labels, 2):
        pair = f"{first} vs {second}"
        a, b = groups[first], groups[second]
        if paired:
            t, p_t = stats.ttest_rel(b, a)
            result.tests.append(TestResult(
                f"paired t-test ({unit})", pair, float(t), str(len(a) - 1), float(p_t), len(a),
                f"Paired by {block}, {second} minus {first} {_verdict(p_t)} ({_p_text(p_t)}).",
            ))
            if np.any(b - a != 0):
                w, p_w = stats.wilcoxon(b, a)
                result.tests.append(TestResult(
                    f"Wilcoxon signed-rank ({unit})", pair, float(w), "", float(p_w), len(a),
                    f"Without assuming normal differences, {second} against {first} {_verdict(p_w)} "
                    f"({_p_text(p_w)}).",
                ))
        else:
            t, p_t = stats.ttest_ind(b, a, equal_var=False)
            result.tests.append(TestResult(
                "Welch t-test (sessions, unpaired)", pair, float(t), "", float(p_t), len(a) + len(b),
                f"Unpaired, {second} minus {first} {_verdict(p_t)} ({_p_text(p_t)}).",
            ))
        estimate, low, high = bootstrap_difference(a, b, paired=paired, resamples=resamples)
        direction = "higher" if estimate > 0 else "lower"
        covers = low <= 0 <= high
        reading = (
            f"{second} scores {abs(estimate):.4g} {direction} than {first} on {summary} on average over {unit} "
            f"(95% bootstrap CI {low:.4g} to {high:.4g}); "
            + ("the interval includes 0, so the data are consistent with no difference."
               if covers else "the interval excludes 0.")
        )
        result.differences.append(Difference(first, second, estimate, low, high, len(a), paired, reading))
    return result
