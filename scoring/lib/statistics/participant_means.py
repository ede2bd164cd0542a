"""The paired test of participant means: the test a within-subject design calls for.

In a within-subject study every participant uses every system, so the two systems' scores are not independent
samples: each participant's own level (a fast searcher, a lenient reader) is in both. An unpaired test on the
sessions, or a one-way ANOVA, counts that level as noise and loses the design's power (on the pilot of issue
42 they gave p = 0.30-0.33 where the mixed model gave 0.003). The paired test takes it out:

- For each participant p and system s, m_ps = the mean of p's sessions on s (over their scenarios).
- The pairs of systems (A, B): only participants with at least one session on both; d_p = m_pB - m_pA.
- Paired t-test (scipy.stats.ttest_rel(B, A)): t = mean(d) / (sd(d) / sqrt(n)), df = n - 1.
- Mean difference mean(d) with the 95% t interval mean(d) +- t_{0.975, n-1} * sd(d) / sqrt(n) (the interval
  that the paired t-test inverts, so it excludes 0 exactly when p < 0.05).
- Cohen's d_z = mean(d) / sd(d) (= t / sqrt(n)), with its exact noncentral-t interval (effects.cohens_dz).
- Wilcoxon signed-rank (scipy.stats.wilcoxon(B, A), zero_method="wilcox": a participant whose means are
  equal drops out of the ranking), its non-parametric twin. *Exact or approximate*, chosen here and stated on
  every result rather than left to scipy's default: the exact null distribution when at most
  WILCOXON_EXACT_UP_TO participants have a non-zero difference and no two |d| tie; otherwise the normal
  approximation (with its tie correction and without continuity correction), because the exact distribution
  assumes untied ranks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy import stats

from ..number_text import number_text
from .effects import Effect, cohens_dz

# Up to this many non-zero, untied differences the Wilcoxon p-value is exact (scipy's own threshold).
WILCOXON_EXACT_UP_TO = 50

PAIRED_WHY = (
    "Within-subject design: every participant used every system, so each participant's mean on one system "
    "is paired with their own mean on the other; the paired test removes the participants' own level, which "
    "the unpaired test and the one-way ANOVA count as noise."
)


@dataclass(frozen=True)
class PairedMeans:
    """The paired comparison of one pair of systems on participant means (second minus first)."""

    first: str
    second: str
    n_pairs: int
    participants: tuple  # the participants with both systems, in sorted order
    mean_first: float
    mean_second: float
    mean_difference: float
    low: float  # the 95% t interval of the mean difference
    high: float
    t: float
    df: int
    p_t: float
    wilcoxon: float  # the smaller signed-rank sum (scipy's statistic); nan when every difference is 0
    p_wilcoxon: float
    wilcoxon_method: str  # "exact" or "normal approximation"
    n_wilcoxon: int  # the pairs with a non-zero difference, which the signed-rank test ranks
    d_z: Effect
    reading: str


def _mean_matrix(values: np.ndarray, systems: np.ndarray, participants: np.ndarray) -> dict:
    """{(participant, system): mean of that participant's sessions on that system}."""
    cells: dict = {}
    for value, system, participant in zip(values, systems, participants, strict=True):
        cells.setdefault((participant, system), []).append(float(value))
    return {key: float(np.mean(cell)) for key, cell in cells.items()}


def _p_words(p: float) -> str:
    if not np.isfinite(p):
        return "p not defined"
    return "p < 0.001" if p < 0.001 else f"p = {number_text(p, '.3f')}"


def wilcoxon_method(differences: np.ndarray) -> str:
    """ "exact" or "approx" for scipy.stats.wilcoxon on these paired differences (zeros dropped)."""
    nonzero = np.abs(differences[differences != 0])
    untied = len(np.unique(nonzero)) == len(nonzero)
    return "exact" if 0 < len(nonzero) <= WILCOXON_EXACT_UP_TO and untied else "approx"


def paired_means(
    values: Sequence[float] | np.ndarray,
    systems: Sequence | np.ndarray,
    participants: Sequence | np.ndarray,
    first: str,
    second: str,
    *,
    summary: str = "value",
) -> PairedMeans | None:
    """The paired comparison of `second` against `first` on participant means; None when fewer than two
    participants have sessions on both (no test is defined). `values`, `systems` and `participants` label
    each session."""
    means = _mean_matrix(np.asarray(values, dtype=np.float64), np.asarray(systems), np.asarray(participants))
    return _paired(means, first, second, summary)


def _paired(means: dict, first: str, second: str, summary: str) -> PairedMeans | None:
    """paired_means on the {(participant, system): mean} cells."""
    both = sorted(
        {p for p, s in means if s == first} & {p for p, s in means if s == second}, key=lambda p: str(p)
    )
    if len(both) < 2:
        return None
    a = np.array([means[(p, first)] for p in both])
    b = np.array([means[(p, second)] for p in both])
    d = b - a
    n = len(d)
    mean_d = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd > 0:
        t_res = stats.ttest_rel(b, a)
        t, p_t = float(t_res.statistic), float(t_res.pvalue)
        half = float(stats.t.ppf(0.975, n - 1)) * sd / np.sqrt(n)
    else:  # every participant's difference is the same: the t statistic is not defined
        t, p_t, half = float("nan"), float("nan"), 0.0
    method = wilcoxon_method(d)
    n_wilcoxon = int(np.count_nonzero(d))
    if n_wilcoxon:
        w_res = stats.wilcoxon(b, a, zero_method="wilcox", method=method, correction=False)
        w, p_w = float(w_res.statistic), float(w_res.pvalue)
    else:
        w, p_w = float("nan"), float("nan")
    method_text = "exact" if method == "exact" else "normal approximation"
    low, high = mean_d - half, mean_d + half
    direction = "higher" if mean_d > 0 else "lower"
    reading = (
        f"Paired by participant ({n} participants with sessions on both), {second} scores "
        f"{number_text(abs(mean_d), '.4g')} {direction} than {first} on {summary} on average over "
        f"participant means (95% CI {number_text(low, '.4g')} to {number_text(high, '.4g')}); paired t "
        f"{_p_words(p_t)}, Wilcoxon signed-rank ({method_text}, {n_wilcoxon} non-zero differences) "
        f"{_p_words(p_w)}."
    )
    return PairedMeans(
        first=first,
        second=second,
        n_pairs=n,
        participants=tuple(both),
        mean_first=float(a.mean()),
        mean_second=float(b.mean()),
        mean_difference=mean_d,
        low=float(low),
        high=float(high),
        t=t,
        df=n - 1,
        p_t=p_t,
        wilcoxon=w,
        p_wilcoxon=p_w,
        wilcoxon_method=method_text,
        n_wilcoxon=n_wilcoxon,
        d_z=cohens_dz(a, b),
        reading=reading,
    )


def paired_participant_means(
    values: Sequence[float] | np.ndarray,
    systems: Sequence | np.ndarray,
    participants: Sequence | np.ndarray,
    *,
    summary: str = "value",
) -> list[PairedMeans]:
    """`paired_means` for every pair of systems (in sorted order), leaving out pairs with fewer than two
    participants on both."""
    systems = np.asarray(systems)
    labels = sorted(set(systems.tolist()), key=str)
    means = _mean_matrix(np.asarray(values, dtype=np.float64), systems, np.asarray(participants))
    out = []
    for first, second in combinations(labels, 2):
        result = _paired(means, first, second, summary)
        if result is not None:
            out.append(result)
    return out
