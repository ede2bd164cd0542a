"""Every coefficient with its standard error, interval and p-value against the values Gwet published with his
irrCAC R package (pure, no database).

Sources, transcribed:
- [W] irrCAC's vignette "Weighted Chance-corrected Agreement Coefficients" (K. L. Gwet, 2019-09-01,
  vignettes/weighting.html of the irrCAC R package), quadratic weights: kappa2.table, gwet.ac1.table and
  pa2.table on cont3x3abstractors; gwet.ac1.raw, fleiss.kappa.raw and krippen.alpha.raw on cac.raw4raters.
- [P] the unweighted examples that the irrCAC Python port's documentation reproduces from the R package
  (irrCAC 0.4.4, irrCAC/table.py and irrCAC/raw.py docstrings): AC1 on cont3x3abstractors, AC1 and Fleiss'
  kappa on cac.raw4raters.
Published figures are rounded (3 to 7 digits); each is checked to its last printed digit.
"""

import numpy as np
import pytest

from scoring.lib import agreement, reliability

# cont3x3abstractors: two abstractors' classification of 100 pregnancies (Ectopic, AIU, NIU); Gwet 2014.
ABSTRACTORS = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
nan = np.nan
# cac.raw4raters, as 4 raters x 12 units (irrCAC lists units x raters): the same data as Krippendorff's
# (2011) 4 coders x 12 units example with missing values.
RAW4RATERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, nan],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]
CATEGORIES = [1, 2, 3, 4, 5]


def close(value, published):
    """Equal to the published figure to its last printed digit (an interval's end capped at 1 exactly)."""
    if isinstance(published, int):
        return value == pytest.approx(published, abs=1e-12)
    text = repr(published)
    digits = len(text.split(".")[1].split("e")[0]) if "." in text else 0
    exponent = int(text.split("e")[1]) if "e" in text else 0
    return value == pytest.approx(published, abs=0.51 * 10.0 ** (exponent - digits))


def check(estimate, value, se, low, high, p=None):
    assert close(estimate.estimate, value), estimate
    assert close(estimate.se, se), estimate
    assert close(estimate.ci_low, low) and close(estimate.ci_high, high), estimate
    if p is not None:
        assert close(estimate.p_value, p), estimate


def test_cohens_kappa_gwets_ac2_and_percent_agreement_on_the_abstractors_table_w():
    table = np.array(ABSTRACTORS)
    check(reliability.cohen_kappa_estimate(table, "quadratic"), 0.8921569, 0.03535151, 0.822, 0.962)
    check(reliability.gwet_ac_estimate(table, "quadratic"), 0.9402369, 0.01792019, 0.905, 0.976)
    check(reliability.percent_agreement_estimate(table, "quadratic"), 0.9725, 0.007822244, 0.957, 0.988)


def test_gwets_ac1_on_the_abstractors_table_p():
    check(reliability.gwet_ac_estimate(np.array(ABSTRACTORS)), 0.84933, 0.04322, 0.76358, 0.93508)


def test_the_multi_rater_coefficients_with_missing_ratings_w():
    ac2 = reliability.gwet_ac_many_estimate(RAW4RATERS, CATEGORIES, "quadratic")
    check(ac2, 0.914, 0.10396, 0.685, 1, p=2.634438e-06)
    fleiss = reliability.fleiss_kappa_estimate(RAW4RATERS, CATEGORIES, "quadratic")
    check(fleiss, 0.86494, 0.14603, 0.544, 1, p=9.976081e-05)
    alpha = reliability.krippendorff_alpha_analytic(RAW4RATERS, "interval", CATEGORIES)
    check(alpha, 0.84911, 0.12913, 0.561, 1, p=6.267448e-05)


def test_the_unweighted_multi_rater_coefficients_p():
    ac1 = reliability.gwet_ac_many_estimate(RAW4RATERS, CATEGORIES)
    check(ac1, 0.77544, 0.14295, 0.46081, 1)
    fleiss = reliability.fleiss_kappa_estimate(RAW4RATERS, CATEGORIES)
    check(fleiss, 0.76117, 0.15302, 0.42438, 1)


def test_gwets_form_of_alpha_is_krippendorffs_alpha():
    # Krippendorff (2011) gives 0.743 (nominal) and 0.849 (interval) on these data; Gwet's form with identity
    # and quadratic weights is the same coefficient.
    for level in ("nominal", "interval"):
        analytic = reliability.krippendorff_alpha_analytic(RAW4RATERS, level, CATEGORIES)
        assert analytic.estimate == pytest.approx(agreement.krippendorff_alpha(RAW4RATERS, level), abs=1e-12)
        assert analytic.n == 11  # the unit graded once does not pair


def test_the_method_is_stated():
    estimate = reliability.cohen_kappa_estimate(np.array(ABSTRACTORS), "linear")
    assert estimate.coefficient == "Cohen's kappa (linear weights)"
    assert "analytic" in estimate.method and "Gwet 2014" in estimate.method
    assert estimate.n == 100
