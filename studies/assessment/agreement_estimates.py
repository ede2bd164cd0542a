"""Every agreement coefficient with its standard error, interval, p-value and method, for the agreement page
and its CSV (the lists of scoring/lib/reliability/suite.py; docs/assessing.md, "Agreement"):

- pair_estimates, for a pair of assessors on the documents both graded (their contingency table);
- all_estimates, over all assessors of a scenario (or of every scenario) with missing grades.

The ordinal grades take linear, quadratic and ordinal weights; Krippendorff's ordinal alpha, which has no
analytic variance, is bootstrapped over documents (settings.AGREEMENT_BOOTSTRAP_REPLICATES resamples, a fixed
seed, so the page shows the same interval every time).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from django.conf import settings

from scoring.lib import reliability
from scoring.lib.reliability import PAIR_COEFFICIENTS, AgreementEstimate, estimate_cells, pair_estimates
from studies.assessment.pages import score_text

__all__ = ["CONFIDENCE_LEVEL", "PAIR_COEFFICIENTS", "all_estimates", "pair_estimates"]

# The level of every interval the pages, the CSV and the API show.
CONFIDENCE_LEVEL = 0.95


def all_estimates(data: np.ndarray, scale: list[int]) -> list[AgreementEstimate]:
    """reliability.all_estimates with the page's bootstrap (AGREEMENT_BOOTSTRAP_REPLICATES, fixed seed)."""
    return reliability.all_estimates(
        data,
        scale,
        replicates=settings.AGREEMENT_BOOTSTRAP_REPLICATES,
        seed=reliability.DEFAULT_SEED,
        level=CONFIDENCE_LEVEL,
    )


def p_value_text(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def estimate_texts(estimate: AgreementEstimate) -> dict[str, str]:
    """An estimate's figures for a page: three decimals, "n/a" when undefined, the interval "[low, high]"."""
    interval = (
        "n/a"
        if np.isnan(estimate.ci_low)
        else f"[{score_text(estimate.ci_low)}, {score_text(estimate.ci_high)}]"
    )
    return {
        "estimate": score_text(estimate.estimate),
        "se": score_text(estimate.se),
        "interval": interval,
        "p": "n/a" if np.isnan(estimate.p_value) else p_value_text(estimate.p_value),
    }


CSV_HEADER = ["scenario", "first", "second", *reliability.ESTIMATE_COLUMNS]


def agreement_rows(blocks) -> Iterator[list]:
    """The CSV rows (header first) of assessor_agreement's blocks: a row per coefficient, for all assessors
    (first and second empty) and for each pair; scenario is the code, "all" for the overall block."""
    yield CSV_HEADER
    for block in blocks:
        scenario = block.scenario.code if block.scenario else "all"
        for estimate in block.estimates:
            yield [scenario, "", "", *estimate_cells(estimate)]
        for pair in block.pairs:
            for estimate in pair.estimates:
                yield [scenario, pair.first, pair.second, *estimate_cells(estimate)]
