"""`compare_systems`: every test of the package for one per-session summary, each with a plain-words reading.

A comparison uses one unit throughout (sessions when unpaired, the blocks' means when paired), so its means,
tests and differences cannot point in different directions because they averaged different things.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations

import numpy as np
from scipy import stats

from ..number_text import number_text
from .blocks import anova_blocks, block_means, friedman
from .bootstrap import bootstrap_difference
from .effects import Effect, cohens_dz, kendalls_w, rank_biserial
from .mixed import MixedModel, mixed_model
from .multiplicity import benjamini_hochberg, holm
from .permutation import paired_permutation_test

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
    # What was resampled: the pairs (blocks) when paired; both systems' sessions when unpaired (n_first +
    # n_second: it once said the first system's count, 39, where 77 sessions were resampled).
    n: int
    paired: bool
    reading: str
    n_first: int = 0
    n_second: int = 0


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


def adjust_families(tests: list[TestResult]) -> list[TestResult]:
    """Each test's p adjusted over the pairs of the same test (its family), where a test has more than one
    pair. Tests of all systems at once (Friedman, ANOVA) are one test each and stay as they are."""
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


def p_text(p: float | None) -> str:
    if p is None or not np.isfinite(p):
        return "p not defined"
    return "p < 0.001" if p < 0.001 else f"p = {number_text(p, '.3f')}"


def verdict(p: float | None) -> str:
    if p is None or not np.isfinite(p):
        return "cannot be tested on these data"
    if p < ALPHA:
        return "is significant at the 5% level"
    return "is not significant at the 5% level (the data do not show a difference)"


def compare_systems(
    values: Sequence[float] | np.ndarray,
    systems: Sequence | np.ndarray,
    blocks: Sequence | np.ndarray,
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
    session (one-way ANOVA, Welch's t, a bootstrap resampling sessions). With more than one pair, each
    pairwise test's p is also given Holm- and BH-adjusted over its pairs.

    `design` (each session's participant and scenario) adds the linear mixed model, whose unit is the session
    whatever the comparison's: it models the participants' and scenarios' levels instead of averaging them."""
    values = np.asarray(values, dtype=np.float64)
    systems = np.asarray(systems)
    labels = sorted(set(systems.tolist()), key=str)
    block_labels: list = []
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

    best = max(result.means, key=lambda label: result.means[label])
    per = (
        f"per {block}, over the {len(block_labels)} {block}s that used every system"
        if paired
        else "per session"
    )
    result.notes.append(
        f"Mean {summary} {per}: "
        + ", ".join(f"{k} {number_text(v, '.4g')} (n={result.counts[k]})" for k, v in result.means.items())
        + f". {best} is highest."
    )
    if paired:
        result.tests += _block_tests(matrix, block, unit, resamples)
    else:
        result.tests.append(_one_way_anova(groups, len(values)))
    for first, second in combinations(labels, 2):
        a, b = groups[first], groups[second]
        if paired:
            result.tests += _paired_tests(first, second, a, b, block, unit, resamples)
        else:
            result.tests.append(_welch_test(first, second, a, b))
        result.differences.append(_difference(first, second, a, b, paired, resamples, summary, unit))
    result.tests = adjust_families(result.tests)
    return result


def _one_way_anova(groups: dict[str, np.ndarray], n_sessions: int) -> TestResult:
    f_one, p_one = stats.f_oneway(*groups.values())
    return TestResult(
        "one-way ANOVA (sessions)",
        "all",
        float(f_one),
        f"{len(groups) - 1}, {n_sessions - len(groups)}",
        float(p_one),
        n_sessions,
        f"Across {n_sessions} sessions, the difference between the systems' means {verdict(p_one)} "
        f"({p_text(p_one)}).",
    )


def _block_tests(matrix: np.ndarray, block: str, unit: str, resamples: int) -> list[TestResult]:
    """The tests of all systems at once on the (blocks, systems) matrix of means: Friedman, two-way ANOVA."""
    n_blocks, n_systems = matrix.shape
    chi2, p_fr = friedman(matrix)
    f_b, df1, df2, p_b = anova_blocks(matrix)
    return [
        TestResult(
            f"Friedman ({unit})",
            "all",
            chi2,
            str(n_systems - 1),
            p_fr,
            n_blocks,
            f"Ranking the systems within each {block}, the difference {verdict(p_fr)} ({p_text(p_fr)}, "
            f"{n_blocks} {block}s).",
            effect=kendalls_w(matrix, resamples=resamples),
        ),
        TestResult(
            f"two-way ANOVA (systems x {block}, {unit})",
            "all",
            f_b,
            f"{df1}, {df2}",
            p_b,
            n_blocks,
            f"With the {block}s' own level taken out, the difference between systems {verdict(p_b)} "
            f"({p_text(p_b)}).",
        ),
    ]


def _paired_tests(
    first: str, second: str, a: np.ndarray, b: np.ndarray, block: str, unit: str, resamples: int
) -> list[TestResult]:
    """A pair's tests on the blocks' means: paired t with d_z, Wilcoxon with the rank-biserial r (unless
    every difference is 0), the paired permutation test."""
    pair = f"{first} vs {second}"
    tests = []
    t, p_t = stats.ttest_rel(b, a)
    tests.append(
        TestResult(
            f"paired t-test ({unit})",
            pair,
            float(t),
            str(len(a) - 1),
            float(p_t),
            len(a),
            f"Paired by {block} ({len(a)} {block}s), {second} minus {first} {verdict(p_t)} ({p_text(p_t)}).",
            effect=cohens_dz(a, b),
        )
    )
    if np.any(b - a != 0):
        w, p_w = stats.wilcoxon(b, a)
        tests.append(
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
    tests.append(
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
    return tests


def _welch_test(first: str, second: str, a: np.ndarray, b: np.ndarray) -> TestResult:
    t, p_t = stats.ttest_ind(b, a, equal_var=False)
    return TestResult(
        "Welch t-test (sessions, unpaired)",
        f"{first} vs {second}",
        float(t),
        "",
        float(p_t),
        len(a) + len(b),
        f"Unpaired ({len(a)} sessions on {first}, {len(b)} on {second}), {second} minus {first} "
        f"{verdict(p_t)} ({p_text(p_t)}).",
    )


def _difference(
    first: str,
    second: str,
    a: np.ndarray,
    b: np.ndarray,
    paired: bool,
    resamples: int,
    summary: str,
    unit: str,
) -> Difference:
    """The pair's mean difference (second minus first) with its bootstrap interval, in words."""
    estimate, low, high = bootstrap_difference(a, b, paired=paired, resamples=resamples)
    direction = "higher" if estimate > 0 else "lower"
    covers = low <= 0 <= high
    n = len(a) if paired else len(a) + len(b)
    resampled = (
        f"{n} pairs of {unit} resampled"
        if paired
        else f"n = {n}: {len(a)} on {first} and {len(b)} on {second}, each system's resampled"
    )
    reading = (
        f"{second} scores {number_text(abs(estimate), '.4g')} {direction} than {first} on {summary} on "
        f"average over {unit} (95% bootstrap CI {number_text(low, '.4g')} to {number_text(high, '.4g')}, "
        f"{resampled}); "
        + (
            "the interval includes 0, so the data are consistent with no difference."
            if covers
            else "the interval excludes 0."
        )
    )
    return Difference(first, second, estimate, low, high, n, paired, reading, len(a), len(b))
