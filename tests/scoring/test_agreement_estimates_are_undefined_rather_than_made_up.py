"""Edge cases of the agreement estimates (pure, no database): no documents, one grade only, perfect agreement,
and bad input refused with a message that says what is wrong."""

import math

import numpy as np
import pytest

from scoring.lib import reliability


def test_no_documents_gives_nan_everywhere():
    for estimate in (
        reliability.cohen_kappa_estimate(np.zeros((4, 4))),
        reliability.gwet_ac_estimate(np.zeros((4, 4))),
        reliability.fleiss_kappa_estimate(np.full((3, 5), np.nan), range(4)),
        reliability.krippendorff_alpha_analytic(np.full((3, 5), np.nan), "interval", range(4)),
        reliability.gwet_ac_many_estimate(np.full((3, 5), np.nan)),  # no grades, no categories given
        reliability.krippendorff_alpha_bootstrap(np.zeros((2, 0)), "ordinal"),
    ):
        assert math.isnan(estimate.estimate) and math.isnan(estimate.ci_low) and math.isnan(estimate.p_value)


def test_every_grade_the_same_leaves_kappa_undefined_and_ac1_at_one():
    table = np.array([[9, 0], [0, 0]])
    assert math.isnan(reliability.cohen_kappa_estimate(table).estimate)
    ac1 = reliability.gwet_ac_estimate(table)
    assert ac1.estimate == 1.0 and ac1.se == 0.0 and (ac1.ci_low, ac1.ci_high) == (1.0, 1.0)
    assert math.isnan(reliability.fleiss_kappa_estimate([[1, 1, 1], [1, 1, 1]], range(4)).estimate)


def test_one_document_has_an_estimate_but_no_interval():
    estimate = reliability.cohen_kappa_estimate(np.array([[1, 0], [0, 0]]))
    assert math.isnan(estimate.estimate)
    percent = reliability.percent_agreement_estimate(np.array([[1, 0], [0, 0]]))
    assert percent.estimate == 1.0 and percent.n == 1 and math.isnan(percent.ci_low)


def test_bad_input_is_refused_with_what_is_wrong():
    with pytest.raises(ValueError, match="must be square"):
        reliability.cohen_kappa_estimate(np.ones((2, 3)))
    with pytest.raises(ValueError, match="weighting must be one of"):
        reliability.gwet_ac_estimate(np.ones((3, 3)), "cubic")
    with pytest.raises(ValueError, match="grade 7 is not one of the categories"):
        reliability.fleiss_kappa_estimate([[0, 7], [1, 1]], range(4))
    with pytest.raises(ValueError, match="confidence level must be between 0 and 1"):
        reliability.cohen_kappa_estimate(np.eye(3) * 5 + 1, level=95)
    with pytest.raises(ValueError, match="analytic variance covers the nominal and interval alpha"):
        reliability.krippendorff_alpha_analytic([[0, 1], [1, 1]], "ordinal", range(4))


def test_the_interval_follows_the_confidence_level():
    table = np.array([[20, 5], [4, 21]])
    wide = reliability.cohen_kappa_estimate(table, level=0.99)
    narrow = reliability.cohen_kappa_estimate(table, level=0.90)
    assert wide.ci_low < narrow.ci_low < narrow.estimate < narrow.ci_high < wide.ci_high
