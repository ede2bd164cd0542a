"""Agreement figures against hand-computed values and the `krippendorff` package (pure, no database)."""

import math

import numpy as np
import pytest

from scoring.lib import agreement

# Hand-worked example (3 categories, 6 units): O = [[1,1,0],[0,2,0],[1,0,1]], rows 2,2,2, columns 2,3,1,
# E = row x column / 6. Linear w = |i-j|/2: observed 0.5 + 1 = 1.5, chance 2.5, kappa 1 - 1.5/2.5 = 0.4.
# Quadratic w = ((i-j)/2)^2: observed 0.25 + 1 = 1.25, chance 1.75, kappa 2/7.
# Unweighted: p_o = 4/6, p_e = (4 + 6 + 2)/36 = 1/3, kappa (2/3 - 1/3) / (2/3) = 1/2.
A = [0, 0, 1, 1, 2, 2]
B = [0, 1, 1, 1, 2, 0]


def test_the_confusion_matrix_counts_pairs_by_row_and_column():
    assert agreement.confusion_matrix(A, B, [0, 1, 2]).tolist() == [[1, 1, 0], [0, 2, 0], [1, 0, 1]]


def test_weighted_kappa_matches_the_hand_computed_values():
    assert agreement.weighted_kappa(A, B, [0, 1, 2], "linear") == pytest.approx(0.4)
    assert agreement.weighted_kappa(A, B, [0, 1, 2], "quadratic") == pytest.approx(2 / 7)
    assert agreement.weighted_kappa(A, B, [0, 1, 2], "unweighted") == pytest.approx(0.5)


def test_kappa_is_one_for_perfect_agreement_and_undefined_without_variation():
    assert agreement.weighted_kappa([0, 1, 3], [0, 1, 3], range(4)) == pytest.approx(1.0)
    assert math.isnan(agreement.weighted_kappa([2, 2], [2, 2], range(4)))
    assert math.isnan(agreement.weighted_kappa([], [], range(4)))


def test_a_grade_outside_the_categories_is_refused():
    with pytest.raises(ValueError, match="not one of the categories"):
        agreement.weighted_kappa([0, 5], [0, 1], range(4))


def test_alpha_matches_the_hand_computed_binary_example():
    # Units (0,0), (1,1), (0,1): o = [[2,1],[1,2]], n = 6, D_o = 2, D_e = 2*3*3/5, alpha = 1 - 2/3.6 = 4/9.
    data = [[0, 1, 0], [0, 1, 1]]
    for level in ("nominal", "ordinal", "interval"):
        assert agreement.krippendorff_alpha(data, level) == pytest.approx(4 / 9)


def test_alpha_matches_the_krippendorff_package_on_random_data_with_gaps():
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(2008)
    for _ in range(100):
        data = rng.integers(0, 4, (rng.integers(2, 6), rng.integers(3, 25))).astype(float)
        data[rng.random(data.shape) < 0.3] = np.nan
        for level in ("ordinal", "interval", "nominal"):
            ours = agreement.krippendorff_alpha(data, level, values=[0, 1, 2, 3])
            with np.errstate(all="ignore"):
                try:
                    theirs = krippendorff.alpha(
                        reliability_data=data, level_of_measurement=level, value_domain=[0, 1, 2, 3]
                    )
                except ValueError:  # the package refuses data with one value or no pairable unit
                    theirs = float("nan")
            assert ours == pytest.approx(theirs, nan_ok=True), (level, data.tolist())


def test_alpha_of_krippendorffs_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the 4 coders x 12 units example
    # with missing values: nominal 0.743, ordinal 0.815 and interval 0.849.
    nan = np.nan
    data = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
    assert agreement.krippendorff_alpha(data, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert agreement.krippendorff_alpha(data, "ordinal") == pytest.approx(0.815, abs=5e-4)
    assert agreement.krippendorff_alpha(data, "interval") == pytest.approx(0.849, abs=5e-4)


def test_percent_agreement_counts_exact_matches():
    assert agreement.percent_agreement(A, B) == pytest.approx(4 / 6)
