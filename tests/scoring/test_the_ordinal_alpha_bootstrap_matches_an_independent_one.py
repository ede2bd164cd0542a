"""Krippendorff's ordinal alpha's bootstrap interval against an independent implementation (pure, no
database): the same resamples of documents (the same seeded draws of n document indices, B times), each
resample's alpha computed by the `krippendorff` package on the resampled documents' grades, then the standard
deviation, the percentile interval and the bootstrap p-value as docs/assessing.md states them. Random data
with ties, missing grades and 95% of documents graded 0, where alpha is often undefined in a resample."""

import numpy as np
import pytest
from krippendorff import alpha as krippendorff_alpha

from scoring.lib import reliability


def graded(rng, documents: int, prevalence: float) -> np.ndarray:
    truth = np.where(rng.random(documents) < prevalence, 0, rng.integers(1, 4, documents))
    keep = rng.random((3, documents)) < 0.8
    data = np.where(keep, truth, rng.integers(0, 4, (3, documents))).astype(float)
    data[rng.random(data.shape) < 0.2] = np.nan
    return data


def independent_bootstrap(data, replicates: int, seed: int, level: float = 0.95):
    pairable = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
    n = pairable.shape[1]
    picks = np.random.default_rng(seed).integers(0, n, size=(replicates, n))
    alphas = []
    for pick in picks:
        sample = pairable[:, pick]
        if np.unique(sample[~np.isnan(sample)]).size < 2:
            continue  # one grade value: alpha undefined, left out
        alphas.append(krippendorff_alpha(sample, level_of_measurement="ordinal", value_domain=[0, 1, 2, 3]))
    alphas = np.array(alphas)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(alphas, [tail, 100 - tail])
    p_value = min(1.0, 2 * (min((alphas <= 0).sum(), (alphas >= 0).sum()) + 1) / (alphas.size + 1))
    return alphas, alphas.std(ddof=1), low, high, p_value


@pytest.mark.parametrize("prevalence", [0.5, 0.95])
def test_the_interval_se_and_p_value_equal_an_independent_bootstrap(prevalence):
    rng = np.random.default_rng(2014)
    for case in range(6):
        data = graded(rng, int(rng.integers(10, 40)), prevalence)
        ours = reliability.krippendorff_alpha_bootstrap(data, "ordinal", range(4), replicates=200, seed=case)
        alphas, se, low, high, p_value = independent_bootstrap(data, 200, case)
        assert ours.estimate == pytest.approx(
            krippendorff_alpha(data, level_of_measurement="ordinal", value_domain=[0, 1, 2, 3]), abs=1e-12
        )
        assert ours.se == pytest.approx(se, abs=1e-10)
        assert (ours.ci_low, ours.ci_high) == pytest.approx((low, high), abs=1e-10)
        assert ours.p_value == pytest.approx(p_value, abs=1e-12)
        left_out = 200 - alphas.size
        assert (f"({left_out} resample" in ours.method) == (left_out > 0)
