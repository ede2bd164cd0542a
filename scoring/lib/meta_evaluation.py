"""Meta-evaluation: which session measure agrees with what the participants said (numpy and scipy, no Django).

Session level: each measure's per-session value against each numeric post-task rating (how well the search
went, ...), Pearson's r and Spearman's rho, each with a percentile bootstrap 95% interval (resampling the
sessions, seeded) and scipy's p; over all systems and within each system. Holm and Benjamini-Hochberg adjust
the p-values over the family of one table: every (measure, rating) pair of one scope and one coefficient.

System level: the ranking of the systems that each measure gives (its mean per system), against every other
measure's and each rating's, by Kendall's tau-b (scipy.stats.kendalltau).

The bootstrap draws each resample as counts (how often each session is drawn), so that every measure of a
scope is correlated on the same resamples without copying the data: a resample's Pearson r is the
count-weighted r, and its Spearman rho the count-weighted r of the ranks the resample itself would give (each
value's rank among the drawn values, ties averaged): exactly scipy.stats.pearsonr / spearmanr on the resample
(tests/scoring/test_statistics_meta_evaluation.py checks it draw by draw).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from scipy import stats

from .statistics import benjamini_hochberg, bootstrap_counts, holm, resample_ranks

ALL_SYSTEMS = "all systems"
COEFFICIENTS = ("pearson", "spearman")
COEFFICIENT_LABELS = {"pearson": "Pearson r", "spearman": "Spearman rho"}
BLOCK = 200  # resamples per block: a (200, sessions) matrix of counts at a time


@dataclass(frozen=True)
class Agreement:
    scope: str  # ALL_SYSTEMS or a system's code
    measure: str
    rating: str
    coefficient: str  # pearson | spearman
    n: int  # sessions (units) with both values
    value: float
    low: float
    high: float
    p_value: float
    p_holm: float
    p_bh: float


@dataclass(frozen=True)
class RankingAgreement:
    first: str  # a ranker: a measure, or "rating: <item>"
    second: str
    tau: float
    p_value: float
    systems: int


@dataclass
class MetaEvaluation:
    correlations: list[Agreement] = field(default_factory=list)
    system_means: dict[str, dict[str, float]] = field(default_factory=dict)  # ranker -> system -> mean
    rankings: list[RankingAgreement] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def weighted_pearson(counts: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson's r of each resample (row of counts). x and y are (n,) or, per resample, (R, n)."""
    total = counts.sum(axis=1)
    mx = (counts * x).sum(axis=1) / total
    my = (counts * y).sum(axis=1) / total
    dx = x - mx[:, None]
    dy = y - my[:, None]
    sxy = (counts * dx * dy).sum(axis=1)
    sxx = (counts * dx * dx).sum(axis=1)
    syy = (counts * dy * dy).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sxy / np.sqrt(sxx * syy)
    r[(sxx <= 0) | (syy <= 0)] = np.nan
    return np.clip(r, -1.0, 1.0)


def weighted_spearman(counts: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return weighted_pearson(counts, resample_ranks(counts, x), resample_ranks(counts, y))


def _pearson_from_sums(w, sx, sy, sxx, syy, sxy) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        vx, vy = w * sxx - sx * sx, w * syy - sy * sy
        r = (w * sxy - sx * sy) / np.sqrt(vx * vy)
    r[(vx <= 1e-12 * w * w) | (vy <= 1e-12 * w * w)] = np.nan
    return np.clip(r, -1.0, 1.0)


def _bootstrap(measures, names, y_all, keep, resamples: int, seed: int) -> dict:
    """{(measure, coefficient): the resamples' values} for measures valid on the same sessions (`keep`): the
    same seeded draws for each, a block of resamples at a time (a (resamples, sessions) matrix would be 160 MB
    for 10,000 sessions). Pearson's sums for every measure are one matrix product per block."""
    y = y_all[keep]
    y = (y - y.mean()) / (y.std() or 1.0)  # r is unchanged; the sums of squares stay well conditioned
    xs = np.column_stack([measures[m][keep] for m in names])
    xs = (xs - xs.mean(axis=0)) / np.where(xs.std(axis=0) > 0, xs.std(axis=0), 1.0)
    columns = np.column_stack([xs, xs * xs, xs * y[:, None], y, y * y])
    m = len(names)
    rng = np.random.default_rng(seed)
    out: dict[tuple[str, str], list] = {(name, c): [] for name in names for c in COEFFICIENTS}
    for start in range(0, resamples, BLOCK):
        counts = bootstrap_counts(len(y), min(BLOCK, resamples - start), rng)
        w = counts.sum(axis=1)[:, None]
        sums = counts @ columns
        pearson = _pearson_from_sums(
            w, sums[:, :m], sums[:, [3 * m]], sums[:, m : 2 * m], sums[:, [3 * m + 1]], sums[:, 2 * m : 3 * m]
        )
        y_ranks = resample_ranks(counts, y)
        weighted_y = counts * y_ranks
        sy, syy = weighted_y.sum(axis=1), (weighted_y * y_ranks).sum(axis=1)
        for j, name in enumerate(names):
            out[(name, "pearson")].append(pearson[:, j])
            x_ranks = resample_ranks(counts, xs[:, j])
            weighted_x = counts * x_ranks
            out[(name, "spearman")].append(
                _pearson_from_sums(
                    w[:, 0],
                    weighted_x.sum(axis=1),
                    sy,
                    (weighted_x * x_ranks).sum(axis=1),
                    syy,
                    (weighted_x * y_ranks).sum(axis=1),
                )
            )
    return {key: np.concatenate(parts) for key, parts in out.items()}


def _interval(boot: np.ndarray, level: float) -> tuple[float, float]:
    boot = boot[np.isfinite(boot)]
    if len(boot) < 2:
        return float("nan"), float("nan")
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(boot, [tail, 100.0 - tail])
    return float(low), float(high)


def _point(coefficient: str, x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), float("nan")
    result = stats.pearsonr(x, y) if coefficient == "pearson" else stats.spearmanr(x, y)
    return float(result.statistic), float(result.pvalue)


def unit_means(values: Mapping[str, np.ndarray], systems: Sequence[str], keys: Sequence) -> tuple[dict, list]:
    """Each (unit, system)'s mean of every variable (NaN where the unit has none: an unanswered rating), and
    the system of each such cell: a participant's sessions on a system become one point."""
    cells: dict = {}
    for i, (key, system) in enumerate(zip(keys, systems, strict=True)):
        cells.setdefault((key, system), []).append(i)
    members = list(cells.values())
    out = {}
    for name, column in values.items():
        column = np.asarray(column, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            out[name] = np.array(
                [np.nanmean(column[m]) if np.isfinite(column[m]).any() else np.nan for m in members]
            )
    return out, [system for _, system in cells]


def meta_evaluate(
    measures: Mapping[str, Sequence[float]],
    ratings: Mapping[str, Sequence[float]],
    systems: Sequence[str],
    *,
    resamples: int = 2000,
    seed: int = 2016,
    level: float = 0.95,
) -> MetaEvaluation:
    """Every measure against every rating (NaN: no answer, or no value), over all systems and per system, and
    the systems' rankings by each measure and rating against each other. `measures` and `ratings` map a name
    to one value per session (or unit), in the order of `systems`."""
    systems = [str(s) for s in systems]
    labels = sorted(set(systems), key=str)
    measure_values = {k: np.asarray(v, dtype=np.float64) for k, v in measures.items()}
    rating_values = {k: np.asarray(v, dtype=np.float64) for k, v in ratings.items()}
    result = MetaEvaluation()
    if not rating_values:
        result.notes.append(
            "The study has no numeric post-task rating: nothing to correlate the measures with."
        )
    system_array = np.asarray(systems)
    scopes = [(ALL_SYSTEMS, np.ones(len(systems), dtype=bool))]
    if len(labels) > 1:
        scopes += [(label, system_array == label) for label in labels]
    for scope, in_scope in scopes:
        rows: list[dict] = []
        for rating, y_all in rating_values.items():
            rows += _rating_rows(scope, in_scope, rating, y_all, measure_values, resamples, seed, level)
        for coefficient in COEFFICIENTS:
            family = [r for r in rows if r["coefficient"] == coefficient]
            p = [r["p_value"] for r in family]
            for r, h, b in zip(family, holm(p), benjamini_hochberg(p), strict=True):
                r["p_holm"], r["p_bh"] = float(h), float(b)
        result.correlations += [Agreement(**r) for r in rows]
    undefined = sorted({f"{a.measure} ({a.scope})" for a in result.correlations if not np.isfinite(a.value)})
    if undefined:
        result.notes.append(
            "No correlation where fewer than three sessions have both values or one of them does not "
            "vary: " + ", ".join(undefined[:12]) + (" ..." if len(undefined) > 12 else "") + "."
        )

    rankers = {**measure_values, **{f"rating: {k}": v for k, v in rating_values.items()}}
    for name, values in rankers.items():
        means = {}
        for label in labels:
            column = values[(system_array == label) & np.isfinite(values)]
            means[label] = float(column.mean()) if len(column) else float("nan")
        result.system_means[name] = means
    if len(labels) < 2:
        result.notes.append("One system: there is no ranking of systems to compare.")
        return result
    if len(labels) == 2:
        result.notes.append(
            "With two systems Kendall's tau is 1 (same order) or -1 (reversed); its p is not informative."
        )
    result.rankings = _ranking_agreements(rankers, result.system_means, labels)
    return result


def _rating_rows(
    scope: str,
    in_scope: np.ndarray,
    rating: str,
    y_all: np.ndarray,
    measures: dict[str, np.ndarray],
    resamples: int,
    seed: int,
    level: float,
) -> list[dict]:
    """One row per measure and coefficient against one rating in one scope: the correlation, its bootstrap
    interval and p (adjusted over the scope's family by the caller)."""
    # The measures valid on the same sessions share their draws, a block of resamples at a time.
    groups: dict[bytes, list[str]] = {}
    masks = {}
    for measure, x_all in measures.items():
        keep = in_scope & np.isfinite(x_all) & np.isfinite(y_all)
        masks[measure] = keep
        groups.setdefault(np.packbits(keep).tobytes(), []).append(measure)
    rows: list[dict] = []
    boots = {}
    for names in groups.values():
        keep = masks[names[0]]
        n = int(keep.sum())
        points = {(m, c): _point(c, measures[m][keep], y_all[keep]) for m in names for c in COEFFICIENTS}
        wanted = [m for m in names if any(np.isfinite(points[(m, c)][0]) for c in COEFFICIENTS)]
        if wanted:
            boots.update(_bootstrap(measures, wanted, y_all, keep, resamples, seed))
        for measure in names:
            for coefficient in COEFFICIENTS:
                value, p = points[(measure, coefficient)]
                low = high = float("nan")
                if np.isfinite(value):
                    low, high = _interval(boots[(measure, coefficient)], level)
                rows.append(
                    {
                        "scope": scope,
                        "measure": measure,
                        "rating": rating,
                        "coefficient": coefficient,
                        "n": n,
                        "value": value,
                        "low": low,
                        "high": high,
                        "p_value": p,
                    }
                )
    return rows


def _ranking_agreements(
    rankers: dict[str, np.ndarray], system_means: dict[str, dict[str, float]], labels: list[str]
) -> list[RankingAgreement]:
    """Kendall's tau between the systems' rankings by each pair of measures and ratings."""
    agreements = []
    for first, second in combinations(rankers, 2):
        a = np.array([system_means[first][s] for s in labels])
        b = np.array([system_means[second][s] for s in labels])
        both = np.isfinite(a) & np.isfinite(b)
        tau = p = float("nan")
        if both.sum() >= 2 and np.ptp(a[both]) > 0 and np.ptp(b[both]) > 0:
            outcome = stats.kendalltau(a[both], b[both])
            tau, p = float(outcome.statistic), float(outcome.pvalue)
        agreements.append(RankingAgreement(first, second, tau, p, int(both.sum())))
    return agreements
