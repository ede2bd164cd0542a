"""The coefficients shown together, in their order: for a pair of graders (their contingency table) and over
all graders (graders x documents with missing grades). The agreement page, its CSV and `python -m scoring
agreement` all report these lists, so a script's figures match the page's.

Over all graders the report holds one rule for every coefficient: a document graded by fewer than two graders
carries no agreement and is left out (graded_twice_or_more), so every coefficient's n is the documents with
two grades or more, the n of the pairs' and of Krippendorff's alpha alike. The many-grader functions
themselves (many_graders.py) keep irrCAC's convention, where a document graded once still counts in the
grades' shares π_k and in n; called on a document graded once they give another figure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from .bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED, krippendorff_alpha_bootstrap
from .estimate import AgreementEstimate
from .many_graders import (
    brennan_prediger_many_estimate,
    fleiss_kappa_estimate,
    gwet_ac_many_estimate,
    krippendorff_alpha_analytic,
    percent_agreement_many_estimate,
)
from .two_graders import (
    brennan_prediger_estimate,
    cohen_kappa_estimate,
    gwet_ac_estimate,
    percent_agreement_estimate,
    scott_pi_estimate,
)

PAIR_COEFFICIENTS: list[Callable[..., AgreementEstimate]] = [
    percent_agreement_estimate,
    partial(cohen_kappa_estimate, weighting="unweighted"),
    partial(cohen_kappa_estimate, weighting="linear"),
    partial(cohen_kappa_estimate, weighting="quadratic"),
    partial(gwet_ac_estimate, weighting="unweighted"),
    partial(gwet_ac_estimate, weighting="linear"),
    partial(gwet_ac_estimate, weighting="quadratic"),
    partial(gwet_ac_estimate, weighting="ordinal"),
    # Appended, not inserted: the page, the CSV and scripts may read the ones above by position.
    scott_pi_estimate,
    brennan_prediger_estimate,
]


def pair_estimates(matrix: np.ndarray, *, level: float = 0.95) -> list[AgreementEstimate]:
    """Percent agreement, Cohen's kappa (unweighted, linear, quadratic), Gwet's AC1 and AC2 (linear,
    quadratic, ordinal), Scott's pi and Brennan-Prediger of one pair's contingency table."""
    return [coefficient(matrix, level=level) for coefficient in PAIR_COEFFICIENTS]


def graded_twice_or_more(data) -> tuple[np.ndarray, int]:
    """(the graders x documents `data` with only its documents graded by two graders or more, how many
    documents graded by one grader alone were left out). Documents nobody graded are dropped uncounted."""
    data = np.asarray(data, dtype=float)
    if data.ndim != 2:
        raise ValueError("ratings must be a graders x documents matrix (NaN where a grader gave no grade)")
    grades = (~np.isnan(data)).sum(axis=0)
    return data[:, grades >= 2], int((grades == 1).sum())


def all_estimates(
    data,
    scale: Sequence,
    *,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> list[AgreementEstimate]:
    """Over all graders (`data`: graders x documents, NaN where a grader gave no grade; `scale`: every grade
    in order): Fleiss' kappa, Gwet's AC1 and AC2 (linear, quadratic, ordinal weights), Krippendorff's alpha
    nominal and interval (analytic) and ordinal (bootstrap over documents, B `replicates`, `seed`), percent
    agreement and Brennan-Prediger; every one with its se, interval at `level`, p-value, method and n.
    Documents graded by fewer than two graders are left out first (graded_twice_or_more), so n is the
    documents with two grades or more for every coefficient."""
    data, _graded_once = graded_twice_or_more(data)
    return [
        fleiss_kappa_estimate(data, scale, level=level),
        gwet_ac_many_estimate(data, scale, level=level),
        gwet_ac_many_estimate(data, scale, "linear", level=level),
        gwet_ac_many_estimate(data, scale, "quadratic", level=level),
        gwet_ac_many_estimate(data, scale, "ordinal", level=level),
        krippendorff_alpha_analytic(data, "nominal", scale, level=level),
        krippendorff_alpha_bootstrap(data, "ordinal", scale, replicates=replicates, seed=seed, level=level),
        krippendorff_alpha_analytic(data, "interval", scale, level=level),
        percent_agreement_many_estimate(data, scale, level=level),
        brennan_prediger_many_estimate(data, scale, level=level),
    ]


ESTIMATE_COLUMNS = ["coefficient", "estimate", "se", "ci_low", "ci_high", "p_value", "n", "method"]


def estimate_cells(estimate: AgreementEstimate) -> list:
    """The estimate as cells in ESTIMATE_COLUMNS' order: numbers in full (repr), empty when undefined."""

    def number(value: float) -> str:
        return "" if value is None or not np.isfinite(value) else repr(float(value))

    return [
        estimate.coefficient,
        number(estimate.estimate),
        number(estimate.se),
        number(estimate.ci_low),
        number(estimate.ci_high),
        number(estimate.p_value),
        estimate.n,
        estimate.method,
    ]
