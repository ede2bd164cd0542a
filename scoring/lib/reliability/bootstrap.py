"""Krippendorff's alpha with a bootstrap over documents, for the level the literature gives no variance for
(the ordinal alpha, whose distances depend on the marginals), and for anyone who prefers it to the analytic.

Alpha is 1 − D_o / D_e on the coincidence matrix o = Σ_u o_u, a sum of one matrix per document u with two or
more grades (scoring/lib/agreement.py). A resample draws n of those n documents with replacement (seeded
numpy Generator) and sums their o_u; alpha is computed on each of B resamples. Reported: the estimate on the
data, se = the standard deviation of the B alphas, the percentile interval ((1 − level) / 2 and
(1 + level) / 2 quantiles) and the two-sided bootstrap p-value for alpha = 0,
2 · min(#{α_b <= 0} + 1, #{α_b >= 0} + 1) / (B + 1), capped at 1. Resamples where alpha is undefined (one
grade value only) are left out and counted in `method`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..agreement import ALPHA_LEVELS, alphas_from_coincidences, krippendorff_alpha
from ..statistics.bootstrap import bootstrap_counts, percentile_interval
from .estimate import AgreementEstimate, check_level, undefined
from .many_graders import category_counts

DEFAULT_REPLICATES = 1000
DEFAULT_SEED = 2014


def document_coincidences(data, values: Sequence | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(domain, per-document coincidence matrices (n x q x q)) of the documents with two or more grades."""
    domain, counts = category_counts(data, values)
    counts = counts[counts.sum(axis=1) >= 2]
    per_doc = counts.sum(axis=1)
    scale = 1.0 / (per_doc - 1.0)
    pairs = np.einsum("uc,uk->uck", counts, counts) - counts[:, :, None] * np.eye(domain.size)[None]
    return domain, pairs * scale[:, None, None]


def krippendorff_alpha_bootstrap(
    data,
    level_of_measurement: str = "ordinal",
    values: Sequence | None = None,
    *,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> AgreementEstimate:
    """Krippendorff's alpha at `level_of_measurement`, seeded bootstrap over documents (B `replicates`)."""
    check_level(level)
    if level_of_measurement not in ALPHA_LEVELS:
        raise ValueError(f"level must be one of {ALPHA_LEVELS}, not {level_of_measurement!r}")
    if replicates < 2:
        raise ValueError(f"the bootstrap needs at least 2 replicates, not {replicates}")
    name = f"Krippendorff's alpha ({level_of_measurement})"
    domain, per_doc = document_coincidences(data, values)
    n = per_doc.shape[0]
    method = f"bootstrap over documents, B = {replicates}, seed {seed}, percentile interval"
    estimate = krippendorff_alpha(data, level_of_measurement, values=domain.tolist()) if n else float("nan")
    if np.isnan(estimate) or n < 2:
        return undefined(name, method, n, estimate)
    counts = bootstrap_counts(n, replicates, np.random.default_rng(seed))
    summed = (counts @ per_doc.reshape(n, -1)).reshape(replicates, domain.size, domain.size)
    alphas = alphas_from_coincidences(domain, summed, level_of_measurement)
    defined = alphas[np.isfinite(alphas)]
    if defined.size < 2:
        return undefined(name, method, n, estimate)
    if defined.size < replicates:
        left_out = replicates - defined.size
        method += f" ({left_out} resample{'' if left_out == 1 else 's'} with one grade value left out)"
    low, high = percentile_interval(defined, level)
    tail = min((defined <= 0).sum(), (defined >= 0).sum()) + 1
    p_value = min(1.0, 2.0 * tail / (defined.size + 1))
    se = float(defined.std(ddof=1))
    return AgreementEstimate(name, float(estimate), se, low, high, float(p_value), method, n)
