"""Krippendorff's alpha with a seeded bootstrap over documents (pure, no database): the same seed gives the
same interval, B is configurable and stated, the estimate is the exact alpha, and on data large enough the
bootstrap's standard error is near Gwet's analytic one."""

import numpy as np
import pytest

from scoring.lib import agreement, reliability


def graded(seed: int, documents: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = np.where(rng.random(documents) < 0.8, 0, rng.integers(1, 4, documents))
    noise = rng.integers(-1, 2, (3, documents)) * (rng.random((3, documents)) < 0.3)
    data = np.clip(truth + noise, 0, 3).astype(float)
    data[rng.random(data.shape) < 0.2] = np.nan
    return data


def test_the_same_seed_gives_the_same_interval_and_another_seed_another():
    data = graded(1, 60)
    first = reliability.krippendorff_alpha_bootstrap(data, "ordinal", range(4), replicates=300, seed=7)
    again = reliability.krippendorff_alpha_bootstrap(data, "ordinal", range(4), replicates=300, seed=7)
    other = reliability.krippendorff_alpha_bootstrap(data, "ordinal", range(4), replicates=300, seed=8)
    assert first == again
    assert (first.ci_low, first.ci_high) != (other.ci_low, other.ci_high)
    assert first.estimate == other.estimate == pytest.approx(agreement.krippendorff_alpha(data, "ordinal"))


def test_the_interval_holds_the_estimate_and_the_method_says_how_it_was_made():
    data = graded(2, 80)
    result = reliability.krippendorff_alpha_bootstrap(data, "ordinal", range(4), replicates=500, seed=3)
    assert result.ci_low < result.estimate < result.ci_high <= 1
    assert result.method == "bootstrap over documents, B = 500, seed 3, percentile interval"
    assert result.coefficient == "Krippendorff's alpha (ordinal)"
    assert result.n == int(((~np.isnan(data)).sum(axis=0) >= 2).sum())
    assert 0 < result.p_value <= 2 / 501  # every resample's alpha is above 0


def test_on_many_documents_the_bootstrap_se_is_near_the_analytic_one():
    data = graded(4, 400)
    boot = reliability.krippendorff_alpha_bootstrap(data, "interval", range(4), replicates=2000, seed=5)
    analytic = reliability.krippendorff_alpha_analytic(data, "interval", range(4))
    assert boot.estimate == pytest.approx(analytic.estimate, abs=1e-12)
    assert boot.se == pytest.approx(analytic.se, rel=0.15)


def test_no_interval_without_two_documents_and_a_clear_error_for_too_few_replicates():
    one = reliability.krippendorff_alpha_bootstrap([[0, np.nan], [1, 2]], "ordinal", range(4))
    assert one.n == 1 and np.isnan(one.ci_low) and np.isnan(one.se)
    with pytest.raises(ValueError, match="at least 2 replicates"):
        reliability.krippendorff_alpha_bootstrap(graded(1, 10), "ordinal", range(4), replicates=1)
    with pytest.raises(ValueError, match="level must be one of"):
        reliability.krippendorff_alpha_bootstrap(graded(1, 10), "ratio", range(4))


def test_the_resamples_alphas_at_once_equal_alpha_one_matrix_at_a_time():
    rng = np.random.default_rng(9)
    domain = np.array([0.0, 1.0, 2.0, 3.0])
    for level in ("nominal", "ordinal", "interval"):
        _domain, per_doc = reliability.bootstrap.document_coincidences(
            graded(int(rng.integers(99)), 30), range(4)
        )
        weights = rng.integers(0, 3, (50, per_doc.shape[0])).astype(float)
        stack = np.einsum("bu,uck->bck", weights, per_doc)
        stack[0] = 0.0  # no documents: undefined
        stack[1] = np.diag([4.0, 0, 0, 0])  # one value only: undefined
        at_once = agreement.alphas_from_coincidences(domain, stack, level)
        one_by_one = [agreement.alpha_from_coincidence(domain, o, level) for o in stack]
        assert at_once == pytest.approx(one_by_one, abs=1e-12, nan_ok=True)
        assert np.isnan(at_once[:2]).all()
