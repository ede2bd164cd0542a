"""Every agreement coefficient with its standard error, interval, p-value and method, for the agreement page
and its CSV (scoring/lib/reliability; docs/assessing.md, "Agreement"). Two lists, in the order shown:

- PAIR_COEFFICIENTS, for a pair of assessors on the documents both graded (their contingency table);
- ALL_COEFFICIENTS, over all assessors of a scenario (or of every scenario) with missing grades.

The ordinal grades take linear, quadratic and ordinal weights; Krippendorff's ordinal alpha, which has no
analytic variance, is bootstrapped over documents (settings.AGREEMENT_BOOTSTRAP_REPLICATES resamples, a fixed
seed, so the page shows the same interval every time).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

import numpy as np
from django.conf import settings

from scoring.lib import reliability
from scoring.lib.reliability import AgreementEstimate
from studies.assessment.pages import score_text

PAIR_COEFFICIENTS: list[Callable[[np.ndarray], AgreementEstimate]] = [
    reliability.percent_agreement_estimate,
    partial(reliability.cohen_kappa_estimate, weighting="unweighted"),
    partial(reliability.cohen_kappa_estimate, weighting="linear"),
    partial(reliability.cohen_kappa_estimate, weighting="quadratic"),
    partial(reliability.gwet_ac_estimate, weighting="unweighted"),
    partial(reliability.gwet_ac_estimate, weighting="linear"),
    partial(reliability.gwet_ac_estimate, weighting="quadratic"),
    partial(reliability.gwet_ac_estimate, weighting="ordinal"),
]


def pair_estimates(matrix: np.ndarray) -> list[AgreementEstimate]:
    """The coefficients of PAIR_COEFFICIENTS for one pair's contingency table."""
    return [coefficient(matrix) for coefficient in PAIR_COEFFICIENTS]


def all_estimates(data: np.ndarray, scale: list[int]) -> list[AgreementEstimate]:
    """Over all assessors (assessors x documents, NaN where one did not grade): Fleiss' kappa, Gwet's AC1 and
    AC2 (linear, quadratic, ordinal weights), Krippendorff's alpha nominal and interval (analytic) and ordinal
    (bootstrap)."""
    return [
        reliability.fleiss_kappa_estimate(data, scale),
        reliability.gwet_ac_many_estimate(data, scale),
        reliability.gwet_ac_many_estimate(data, scale, "linear"),
        reliability.gwet_ac_many_estimate(data, scale, "quadratic"),
        reliability.gwet_ac_many_estimate(data, scale, "ordinal"),
        reliability.krippendorff_alpha_analytic(data, "nominal", scale),
        reliability.krippendorff_alpha_bootstrap(
            data,
            "ordinal",
            scale,
            replicates=settings.AGREEMENT_BOOTSTRAP_REPLICATES,
            seed=reliability.DEFAULT_SEED,
        ),
        reliability.krippendorff_alpha_analytic(data, "interval", scale),
    ]


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


def p_value_text(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


CSV_HEADER = [
    "scenario",
    "first",
    "second",
    "coefficient",
    "estimate",
    "se",
    "ci_low",
    "ci_high",
    "p_value",
    "n",
    "method",
]


def _number(value: float) -> str:
    return "" if value is None or not np.isfinite(value) else repr(float(value))


def estimate_row(scenario: str, first: str, second: str, estimate: AgreementEstimate) -> list:
    return [
        scenario,
        first,
        second,
        estimate.coefficient,
        _number(estimate.estimate),
        _number(estimate.se),
        _number(estimate.ci_low),
        _number(estimate.ci_high),
        _number(estimate.p_value),
        estimate.n,
        estimate.method,
    ]


def agreement_rows(blocks) -> Iterator[list]:
    """The CSV rows (header first) of assessor_agreement's blocks: a row per coefficient, for all assessors
    (first and second empty) and for each pair; scenario is the code, "all" for the overall block."""
    yield CSV_HEADER
    for block in blocks:
        scenario = block.scenario.code if block.scenario else "all"
        for estimate in block.estimates:
            yield estimate_row(scenario, "", "", estimate)
        for pair in block.pairs:
            for estimate in pair.estimates:
                yield estimate_row(scenario, pair.first, pair.second, estimate)
