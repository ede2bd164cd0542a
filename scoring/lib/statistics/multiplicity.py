"""Adjusted p-values for a family of m tests, NaN not counting as a test (p_(i) the i-th smallest):

- Holm's step-down: p_(i) adjusted = min(1, max_{j <= i} (m - j + 1) p_(j));
- Benjamini-Hochberg, the false discovery rate: p_(i) adjusted = min(1, min_{j >= i} m p_(j) / j).
Both as statsmodels' multipletests (method="holm", "fdr_bh").
"""

from __future__ import annotations

import numpy as np


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
