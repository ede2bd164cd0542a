"""Agreement weights for ordered grades, as Gwet (2014, chapter 3) and irrCAC define them: w[k, l] is the
credit two ratings k and l get (1 on the diagonal, 0 for the farthest grades), from the grades' positions x.

- unweighted (identity): w = [k = l] (Cohen's kappa, Gwet's AC1, Fleiss' kappa, nominal alpha);
- linear:    w = 1 − |x_k − x_l| / (x_max − x_min);
- quadratic: w = 1 − (x_k − x_l)² / (x_max − x_min)²;
- ordinal:   w = 1 − M_kl / max M, M_kl = C(|k − l| + 1, 2) (the number of pairs of grades between k and l,
  counted on ranks k, l).
Linear and quadratic agreement weights are 1 minus scoring/lib/agreement.py's disagreement weights, so the
weighted kappa is the same number either way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

WEIGHTINGS = ("unweighted", "linear", "quadratic", "ordinal")


def agreement_weights(
    positions: Sequence[float] | np.ndarray | int, weighting: str = "unweighted"
) -> np.ndarray:
    """q x q agreement weights for grades at `positions` (sorted), or at 0..q-1 when given an int q."""
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {WEIGHTINGS}, not {weighting!r}")
    x = (
        np.arange(positions, dtype=float)
        if isinstance(positions, int)
        else np.asarray(positions, dtype=float)
    )
    q = x.size
    if weighting == "unweighted" or q < 2:
        return np.eye(q)
    if weighting == "ordinal":
        steps = np.abs(np.arange(q)[:, None] - np.arange(q)[None, :])
        pairs = (steps + 1) * steps / 2.0
        return 1.0 - pairs / pairs.max()
    distance = np.abs(x[:, None] - x[None, :]) / (x.max() - x.min())
    return 1.0 - (distance if weighting == "linear" else distance**2)


def weighted_name(name: str, weighting: str) -> str:
    return name if weighting == "unweighted" else f"{name} ({weighting} weights)"
