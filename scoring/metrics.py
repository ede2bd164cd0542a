"""Single-query measures of Järvelin & Kekäläinen (2002) and their later forms: pure numpy, no Django.

See ../shared/SPEC-metrics.md (docs/scoring.md in this repo) for the definitions and the papers' errata.
"""

from __future__ import annotations

import numpy as np

FORMULATIONS = ("log2", "2008", "2002")


def rank_discount(n: int, formulation: str = "2008", b: float = 2.0) -> np.ndarray:
    """The multiplier applied to the gain at ranks 1..n, so DCG = cumsum(gain * rank_discount(n)).

    - "2008": 1 / (1 + log_b i)           (ECIR 2008 appendix eq. 2, with i the rank of each document)
    - "2002": 1 for i < b, 1 / log_b i    (the original DCG of 2002)
    - "log2": 1 / log2(i + 1)             (trec_eval's ndcg; b is ignored)
    """
    ranks = np.arange(1, n + 1, dtype=np.float64)
    if formulation == "2008":
        _check_base(b)
        return 1.0 / (1.0 + np.log(ranks) / np.log(b))
    if formulation == "2002":
        _check_base(b)
        discount = np.ones(n, dtype=np.float64)
        deep = ranks >= b
        discount[deep] = np.log(b) / np.log(ranks[deep])
        return discount
    if formulation == "log2":
        return 1.0 / np.log2(ranks + 1.0)
    raise ValueError(f"unknown formulation {formulation!r}; choose one of {', '.join(FORMULATIONS)}")


def _check_base(b: float) -> None:
    if not (b > 1.0):
        raise ValueError(f"the rank log base b must be greater than 1, got {b}")
