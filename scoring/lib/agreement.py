"""Agreement between graders: weighted Cohen's kappa for a pair, Krippendorff's alpha for any number.

Pure numpy, no Django: the assessment pages (studies/assessment/adjudication.py) feed it lists of grades, and
it can be used on plain files. Undefined values (no pairs, or no expected disagreement because every grade is
the same) are NaN rather than a made-up 0 or 1: the pages show them as "n/a".

Formulas (k categories c_0 < ... < c_{k-1}, indices i, j):

- confusion matrix O[i, j]: how many units grader A put in c_i and grader B in c_j.
- weighted kappa = 1 - sum(w * O) / sum(w * E), with E[i, j] = row_i * col_j / n (the matrix chance would
  give with the same marginals), w[i, j] = |i - j| / (k - 1) (linear) or ((i - j) / (k - 1))^2 (quadratic).
  With 0/1 weights it is Cohen's unweighted kappa.
- Krippendorff's alpha = 1 - D_o / D_e from the coincidence matrix o[c, k] = sum over units u with m_u >= 2
  values of (n_uc * n_uk - [c = k] * n_uc) / (m_u - 1); n_c = sum_k o[c, k], n = sum_c n_c;
  D_o = sum o[c, k] * delta2[c, k], D_e = sum n_c * n_k * delta2[c, k] / (n - 1);
  interval delta2 = (c - k)^2; ordinal delta2 = (sum_{g between c and k} n_g - (n_c + n_k) / 2)^2;
  nominal delta2 = [c != k] (Krippendorff 2011, "Computing Krippendorff's alpha-reliability").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

WEIGHTINGS = ("linear", "quadratic", "unweighted")
ALPHA_LEVELS = ("nominal", "ordinal", "interval")


def _category_indices(grades, categories: np.ndarray, what: str) -> np.ndarray:
    grades = np.asarray(grades)
    positions = np.searchsorted(categories, grades)
    clipped = np.minimum(positions, categories.size - 1)
    outside = (positions >= categories.size) | (categories[clipped] != grades)
    if outside.any():
        raise ValueError(
            f"{what} grade {grades[outside][0]!r} is not one of the categories {categories.tolist()}"
        )
    return positions


def confusion_matrix(a: Sequence, b: Sequence, categories: Sequence) -> np.ndarray:
    """k x k counts: rows are A's grades, columns B's, both in the order of `categories` (sorted)."""
    cats = np.asarray(sorted(categories))
    if len(a) != len(b):
        raise ValueError(f"the two graders have {len(a)} and {len(b)} grades; pair them unit by unit")
    matrix = np.zeros((cats.size, cats.size), dtype=np.int64)
    if len(a):
        np.add.at(matrix, (_category_indices(a, cats, "first"), _category_indices(b, cats, "second")), 1)
    return matrix


def kappa_weights(k: int, weighting: str = "linear") -> np.ndarray:
    """Disagreement weights (0 on the diagonal, 1 for the farthest categories)."""
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {WEIGHTINGS}, not {weighting!r}")
    index = np.arange(k)
    distance = np.abs(index[:, None] - index[None, :]) / max(k - 1, 1)
    if weighting == "linear":
        return distance
    if weighting == "quadratic":
        return distance**2
    return (distance > 0).astype(float)


def kappa_from_matrix(matrix: np.ndarray, weighting: str = "linear") -> float:
    matrix = np.asarray(matrix, dtype=float)
    n = matrix.sum()
    if n == 0:
        return float("nan")
    weights = kappa_weights(matrix.shape[0], weighting)
    expected = np.outer(matrix.sum(axis=1), matrix.sum(axis=0)) / n
    chance = float((weights * expected).sum())
    if chance == 0:
        return float("nan")
    return 1.0 - float((weights * matrix).sum()) / chance


def weighted_kappa(a: Sequence, b: Sequence, categories: Sequence, weighting: str = "linear") -> float:
    """Cohen's kappa of two graders over the same units, linear or quadratic weights; NaN if undefined."""
    return kappa_from_matrix(confusion_matrix(a, b, categories), weighting)


def percent_agreement(a: Sequence, b: Sequence) -> float:
    if not len(a):
        return float("nan")
    return float(np.mean(np.asarray(a) == np.asarray(b)))


def coincidence_matrix(data, values: Sequence | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(values, o): the sorted value domain and Krippendorff's coincidence matrix over it.

    `data` is graders x units with NaN where a grader did not grade a unit."""
    data = np.asarray(data, dtype=float)
    if data.ndim != 2:
        raise ValueError("reliability data must be a graders x units matrix")
    present = ~np.isnan(data)
    domain = np.unique(data[present]) if values is None else np.asarray(sorted(values), dtype=float)
    counts = np.zeros((data.shape[1], domain.size))
    if domain.size:
        index = _category_indices(data[present], domain, "a")
        units = np.broadcast_to(np.arange(data.shape[1]), data.shape)[present]
        np.add.at(counts, (units, index), 1)
    per_unit = counts.sum(axis=1)
    pairable = per_unit >= 2
    counts, per_unit = counts[pairable], per_unit[pairable]
    scale = 1.0 / (per_unit - 1) if per_unit.size else np.zeros(0)
    o = np.einsum("uc,uk,u->ck", counts, counts, scale) - np.diag((counts * scale[:, None]).sum(axis=0))
    return domain, o


def _alpha_delta2(domain: np.ndarray, marginals: np.ndarray, level: str) -> np.ndarray:
    if level == "interval":
        return (domain[:, None] - domain[None, :]) ** 2
    if level == "nominal":
        return (domain[:, None] != domain[None, :]).astype(float)
    if level == "ordinal":
        cumulative = np.cumsum(marginals)
        low = np.minimum.outer(np.arange(domain.size), np.arange(domain.size))
        high = np.maximum.outer(np.arange(domain.size), np.arange(domain.size))
        between = cumulative[high] - cumulative[low] + marginals[low]
        return (between - (marginals[:, None] + marginals[None, :]) / 2) ** 2
    raise ValueError(f"level must be one of {ALPHA_LEVELS}, not {level!r}")


def krippendorff_alpha(data, level: str = "interval", values: Sequence | None = None) -> float:
    """Krippendorff's alpha of graders x units data (NaN = not graded); NaN when undefined."""
    domain, o = coincidence_matrix(data, values)
    return alpha_from_coincidence(domain, o, level)


def alpha_from_coincidence(domain: np.ndarray, o: np.ndarray, level: str = "interval") -> float:
    """Krippendorff's alpha from a coincidence matrix over the sorted value domain."""
    marginals = o.sum(axis=1)
    n = marginals.sum()
    if n <= 1:
        return float("nan")
    delta2 = _alpha_delta2(domain, marginals, level)
    expected = float((np.outer(marginals, marginals) * delta2).sum()) / (n - 1)
    if expected == 0:
        return float("nan")
    return 1.0 - float((o * delta2).sum()) / expected


def alphas_from_coincidences(domain: np.ndarray, stack: np.ndarray, level: str = "interval") -> np.ndarray:
    """alpha_from_coincidence on each of a stack of coincidence matrices (B x q x q) at once: the bootstrap of
    scoring/lib/reliability sums resampled documents' matrices into such a stack. NaN where undefined."""
    marginals = stack.sum(axis=2)
    n = marginals.sum(axis=1)
    if level == "ordinal":
        cumulative = np.cumsum(marginals, axis=1)
        low = np.minimum.outer(np.arange(domain.size), np.arange(domain.size))
        high = np.maximum.outer(np.arange(domain.size), np.arange(domain.size))
        between = cumulative[:, high] - cumulative[:, low] + marginals[:, low]
        delta2 = (between - (marginals[:, :, None] + marginals[:, None, :]) / 2) ** 2
    else:
        delta2 = np.broadcast_to(_alpha_delta2(domain, np.zeros(domain.size), level), stack.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.einsum("bc,bk,bck->b", marginals, marginals, delta2) / (n - 1)
        alphas = 1.0 - np.einsum("bck,bck->b", stack, delta2) / expected
    return np.where((n <= 1) | (expected == 0), np.nan, alphas)
