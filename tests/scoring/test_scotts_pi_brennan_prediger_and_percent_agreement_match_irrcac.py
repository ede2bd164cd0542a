"""Scott's pi, Brennan-Prediger and the percent agreement of many graders, with their standard errors,
intervals and p-values, against the irrCAC port (a test oracle only: requirements-oracles.txt) on random data
with ties, missing grades and 95% of documents non-relevant, and against Gwet's published figures
(pure, no database).

Where the port departs from the R package it ports, we follow R (test_agreement_coefficients_match_the_
irrcac_port_on_random_data.py says how): its table p-values use max(coefficient, 0), compared where the
coefficient is positive; its raw Brennan-Prediger p-value is one-sided, 1 − T(|bp| / se), so ours (R's,
two-sided) is twice it. The port has no percent agreement of many graders: its `pa` (reported with every raw
coefficient) is the estimate, and the standard error is checked against the table formula, which it must
equal, times sqrt(n / (n − 1)), when two graders grade every document (the raw formulas divide by n − 1).
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from irrCAC.raw import CAC as RawCAC
from irrCAC.table import CAC as TableCAC

from scoring.lib import agreement, reliability

from .test_agreement_coefficients_match_irrcacs_published_examples import (
    ABSTRACTORS,
    RAW4RATERS,
    check,
    close,
)
from .test_agreement_coefficients_match_the_irrcac_port_on_random_data import (
    GRADES,
    PORT_WEIGHTS,
    assert_same,
    cases,
    defined,
    same,
)


def port_table(matrix, weighting):
    return TableCAC(pd.DataFrame(matrix), weights=PORT_WEIGHTS[weighting], digits=20)


def port_raw(data, weighting):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return RawCAC(pd.DataFrame(data.T), weights=PORT_WEIGHTS[weighting], categories=GRADES, digits=20)


def test_scotts_pi_and_brennan_prediger_of_two_graders_equal_the_port():
    compared = 0
    for data in cases(32, 150, (2, 3), missing=0.0):
        matrix = agreement.confusion_matrix(data[0].astype(int), data[1].astype(int), GRADES)
        if not defined(matrix):
            continue
        for weighting in PORT_WEIGHTS:
            with np.errstate(all="ignore"):
                port = port_table(matrix, weighting)
                scott, bp = port.scott()["est"], port.bp()["est"]
            ours_scott = reliability.scott_pi_estimate(matrix, weighting)
            assert_same(ours_scott, scott, p_value=ours_scott.estimate > 0)
            ours_bp = reliability.brennan_prediger_estimate(matrix, weighting)
            assert_same(ours_bp, bp, p_value=ours_bp.estimate > 0)
            compared += 1
    assert compared > 400


def test_brennan_prediger_and_percent_agreement_of_many_graders_equal_the_port():
    compared = 0
    for data in cases(33, 80, (3, 7), missing=0.25):
        _values, counts = reliability.category_counts(data, GRADES)
        if ((counts > 0).sum(axis=0) > 0).sum() < 2 or (counts.sum(axis=1) >= 2).sum() < 3:
            continue
        for weighting in PORT_WEIGHTS:
            with np.errstate(all="ignore"):
                port = port_raw(data, weighting)
                bp = port.bp()["est"]
            ours = reliability.brennan_prediger_many_estimate(data, GRADES, weighting)
            assert_same(ours, bp, p_value=False)
            assert ours.p_value == pytest.approx(min(1.0, 2 * float(bp["p_value"])), abs=1e-9)
            percent = reliability.percent_agreement_many_estimate(data, GRADES, weighting)
            assert same(percent.estimate, bp["pa"])
            compared += 1
    assert compared > 200


def test_the_percent_agreement_of_two_complete_graders_is_the_tables():
    compared = 0
    for data in cases(34, 60, (2, 3), missing=0.0):
        n = data.shape[1]
        matrix = agreement.confusion_matrix(data[0].astype(int), data[1].astype(int), GRADES)
        for weighting in PORT_WEIGHTS:
            raw = reliability.percent_agreement_many_estimate(data, GRADES, weighting)
            table = reliability.percent_agreement_estimate(matrix, weighting)
            assert raw.estimate == pytest.approx(table.estimate, abs=1e-12)
            assert raw.se == pytest.approx(table.se * np.sqrt(n / (n - 1)), abs=1e-12)
            assert raw.n == table.n == n
            compared += 1
    assert compared == 240


# distrib.6raters: how many of 6 psychiatrists put each of 15 patients in each of 5 categories (Depression,
# Personality disorder, Schizophrenia, Neurosis, Other); irrCAC's README.
DISTRIB_6RATERS = [
    [0, 0, 0, 6, 0], [0, 3, 0, 0, 3], [0, 1, 4, 0, 1], [0, 0, 0, 0, 6], [0, 3, 0, 3, 0],
    [2, 0, 4, 0, 0], [0, 0, 4, 0, 2], [2, 0, 3, 1, 0], [2, 0, 0, 4, 0], [0, 0, 0, 0, 6],
    [1, 0, 0, 5, 0], [1, 1, 0, 4, 0], [0, 3, 3, 0, 0], [1, 0, 0, 5, 0], [0, 2, 0, 3, 1],
]  # fmt: skip


def raters_from_distribution(distribution) -> np.ndarray:
    """graders x documents grades (1..q) with each document's counts: which grader gave which grade does not
    matter to these coefficients."""
    columns = [np.repeat(np.arange(1, len(row) + 1), row) for row in distribution]
    return np.array(columns, dtype=float).T


def test_gwets_published_values_unweighted():
    # The irrCAC R package's README (K. L. Gwet, github.com/kgwet/irrCAC): scott2.table, bp2.table and
    # pa2.table on cont3x3abstractors; pa.coeff.raw, bp.coeff.raw, krippen.alpha.raw on cac.raw4raters;
    # the *.dist functions on distrib.6raters. (Its krippen.alpha.raw on cac.raw4raters, se 0.14548, is the
    # variant that centres each document on p'_a with n degrees of freedom; we follow the weighting
    # vignette's figures and the port, se 0.14557: test_agreement_coefficients_match_irrcacs_published_...)
    table = np.array(ABSTRACTORS)
    check(reliability.scott_pi_estimate(table), 0.7962397, 0.05905473, 0.679, 0.913)
    check(reliability.brennan_prediger_estimate(table), 0.835, 0.04693346, 0.742, 0.928)
    check(reliability.percent_agreement_estimate(table), 0.89, 0.03128898, 0.828, 0.952)
    categories = [1, 2, 3, 4, 5]
    percent = reliability.percent_agreement_many_estimate(RAW4RATERS, categories)
    check(percent, 0.8181818, 0.12561, 0.542, 1, p=4.345373e-05)
    bp = reliability.brennan_prediger_many_estimate(RAW4RATERS, categories)
    check(bp, 0.77273, 0.14472, 0.454, 1, p=0.0002375609)
    six = raters_from_distribution(DISTRIB_6RATERS)
    check(
        reliability.gwet_ac_many_estimate(six, categories),
        0.4448007,
        0.08418757,
        0.264,
        0.625,
        p=0.0001155927,
    )
    check(
        reliability.fleiss_kappa_estimate(six, categories), 0.4139265, 0.08119291, 0.24, 0.588, p=0.0001622724
    )
    # krippen.alpha.dist's own variance differs from the raw one's (which we and the port compute): the
    # estimate is the same coefficient.
    alpha_six = reliability.krippendorff_alpha_analytic(six, "nominal", categories)
    assert close(alpha_six.estimate, 0.4204384)
    bp_six = reliability.brennan_prediger_many_estimate(six, categories)
    check(bp_six, 0.4388889, 0.08312142, 0.261, 0.617, p=0.0001163)
