"""Every coefficient with its standard error, interval and p-value equal, to 1e-9, to the irrCAC Python port
(irrCAC 0.4.4, a test oracle only: requirements-oracles.txt) on many random data sets with ties, missing
grades and 95% of documents non-relevant, the pools of IR assessment (pure, no database).

Where the port differs from the R package it ports, we follow the R package and its published values
(test_agreement_coefficients_match_irrcacs_published_examples.py), and these comparisons allow for it:
- its table AC1/AC2 p-value is 2·(1 − T(max(AC, 0)/se)): compared where AC > 0, where it is our two-sided p;
- it reads NaN as a category under pandas 3 unless the categories are given: they are given;
- with a standard error of 0 its interval is NaN; R's (and ours) is the point itself.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from irrCAC.raw import CAC as RawCAC
from irrCAC.table import CAC as TableCAC

from scoring.lib import agreement, reliability

GRADES = [0, 1, 2, 3]
PORT_WEIGHTS = {"unweighted": "identity", "linear": "linear", "quadratic": "quadratic", "ordinal": "ordinal"}
TOLERANCE = 1e-9


def random_grades(rng, graders: int, documents: int, prevalence: float, missing: float) -> np.ndarray:
    """graders x documents grades 0-3: each document's grade is 0 with probability `prevalence` (else 1-3),
    each grader keeps it with probability 0.8 (else a random grade), and leaves it out with `missing`."""
    truth = np.where(rng.random(documents) < prevalence, 0, rng.integers(1, 4, documents))
    keep = rng.random((graders, documents)) < 0.8
    data = np.where(keep, truth, rng.integers(0, 4, (graders, documents))).astype(float)
    data[rng.random(data.shape) < missing] = np.nan
    return data


def cases(seed: int, count: int, graders_range, missing: float):
    rng = np.random.default_rng(seed)
    for index in range(count):
        prevalence = 0.95 if index % 2 else 0.5
        graders = int(rng.integers(*graders_range))
        yield random_grades(rng, graders, int(rng.integers(8, 60)), prevalence, missing)


def same(ours: float, theirs) -> bool:
    return float(ours) == pytest.approx(float(np.ravel(theirs)[0]), abs=TOLERANCE)


def assert_same(estimate, port: dict, *, p_value: bool = True):
    low, high = port["confidence_interval"]
    assert same(estimate.estimate, port["coefficient_value"]), (estimate, port)
    assert same(estimate.se, port["se"]), (estimate, port)
    if estimate.se == 0:  # perfect agreement: R floors the variance, the port's scipy call gives NaN
        assert (estimate.ci_low, estimate.ci_high) == (estimate.estimate, min(1.0, estimate.estimate))
        return
    assert same(estimate.ci_low, low) and same(estimate.ci_high, high), (estimate, port)
    if p_value:
        assert same(estimate.p_value, port["p_value"]), (estimate, port)


def port_table(matrix, weighting):
    frame = pd.DataFrame(matrix)
    return TableCAC(frame, weights=PORT_WEIGHTS[weighting], digits=20)


def port_raw(data, weighting):
    frame = pd.DataFrame(data.T)  # the port reads documents x graders
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return RawCAC(frame, weights=PORT_WEIGHTS[weighting], categories=GRADES, digits=20)


def defined(matrix) -> bool:
    """A table the port can take: both graders used two grades or more (else its se is 0/0)."""
    return (matrix.sum(axis=1) > 0).sum() >= 2 and (matrix.sum(axis=0) > 0).sum() >= 2


def test_two_graders_kappa_ac1_ac2_and_percent_agreement_from_their_table():
    compared = 0
    for data in cases(30, 150, (2, 3), missing=0.0):
        matrix = agreement.confusion_matrix(data[0].astype(int), data[1].astype(int), GRADES)
        if not defined(matrix):
            continue
        for weighting in PORT_WEIGHTS:
            with np.errstate(all="ignore"):
                port = port_table(matrix, weighting)
                kappa, ac, percent = port.cohen()["est"], port.gwet()["est"], port.pa2()["est"]
            ours_kappa = reliability.cohen_kappa_estimate(matrix, weighting)
            assert_same(ours_kappa, kappa)
            ours_ac = reliability.gwet_ac_estimate(matrix, weighting)
            assert_same(ours_ac, ac, p_value=ours_ac.estimate > 0)
            assert_same(reliability.percent_agreement_estimate(matrix, weighting), percent, p_value=False)
            if weighting in ("linear", "quadratic"):
                exact = agreement.kappa_from_matrix(matrix, weighting)
                assert ours_kappa.estimate == pytest.approx(exact, abs=1e-12)
            compared += 1
    assert compared > 400


def test_many_graders_fleiss_kappa_ac1_ac2_and_alpha_with_missing_grades():
    compared = 0
    for data in cases(31, 80, (3, 7), missing=0.25):
        _values, counts = reliability.category_counts(data, GRADES)
        if ((counts > 0).sum(axis=0) > 0).sum() < 2 or (counts.sum(axis=1) >= 2).sum() < 3:
            continue
        for weighting in PORT_WEIGHTS:
            with np.errstate(all="ignore"):
                port = port_raw(data, weighting)
                fleiss, ac = port.fleiss()["est"], port.gwet()["est"]
                alpha = port.krippendorff()["est"]
            assert_same(reliability.fleiss_kappa_estimate(data, GRADES, weighting), fleiss)
            assert_same(reliability.gwet_ac_many_estimate(data, GRADES, weighting), ac)
            if weighting in ("unweighted", "quadratic"):
                level = "nominal" if weighting == "unweighted" else "interval"
                ours_alpha = reliability.krippendorff_alpha_analytic(data, level, GRADES)
                assert_same(ours_alpha, alpha)
                exact = agreement.krippendorff_alpha(data, level, values=GRADES)
                assert ours_alpha.estimate == pytest.approx(exact, abs=1e-12)
            compared += 1
    assert compared > 200
