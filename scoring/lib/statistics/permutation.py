"""The paired randomization (sign-flip permutation) test of the mean difference: under the null hypothesis
each pair's two values are exchangeable, so each difference d_i keeps or flips its sign with probability 1/2,
and the p-value is where mean(d) falls among the means of the sign patterns (all 2^n, or seeded draws).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
