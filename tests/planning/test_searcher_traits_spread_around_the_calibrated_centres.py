"""Each simulated searcher's traits are drawn around the calibrated centres (scoring/lib/searcher_model.py):
people differ, but on average the searchers are the calibrated one."""

import math
import random
import statistics

import pytest

from scoring.lib import searcher_model
from scoring.lib.searcher_model import SearcherParameters, traits_draw
from studies.simulation.calibration import searcher_parameters


def test_the_traits_average_to_the_committed_centres():
    parameters = searcher_parameters()
    rng = random.Random(3)
    drawn = [traits_draw(parameters, rng) for _ in range(20_000)]
    for name in ("scan_mean", "click_relevant", "click_other"):
        values = [getattr(t, name) for t in drawn]
        centre = getattr(parameters, name)
        assert statistics.fmean(values) == pytest.approx(centre, rel=0.02), name
        assert min(values) >= centre * (1 - parameters.spread) - 1e-9
        assert max(values) <= max(1.0, centre) * (1 + parameters.spread)
    patience = [t.patience for t in drawn]
    assert 1 <= min(patience) and max(patience) <= parameters.max_queries
    # 1 + int(Exp(mean)): E = 1 + sum over k >= 1 of exp(-k / mean).
    expected = 1 + sum(math.exp(-k / parameters.patience_mean) for k in range(1, parameters.max_queries))
    assert statistics.fmean(patience) == pytest.approx(expected, rel=0.03)


def test_the_first_query_s_length_and_the_reformulations_follow_the_log_s_shares():
    parameters = searcher_parameters()
    rng = random.Random(5)
    lengths = [searcher_model.first_query_length(parameters, rng) for _ in range(20_000)]
    for length, share in parameters.first_query_terms.items():
        assert lengths.count(int(length)) / len(lengths) == pytest.approx(share, abs=0.015)
    changes = [searcher_model.change_draw(parameters, rng) for _ in range(20_000)]
    for kind, share in parameters.reformulation.items():
        assert changes.count(kind) / len(changes) == pytest.approx(share, abs=0.015)


def test_dwell_is_lognormal_with_the_fitted_median_and_kept_within_bounds():
    parameters = SearcherParameters(dwell_log_mean=3.0, dwell_log_sd=1.0)
    rng = random.Random(11)
    dwells = [searcher_model.dwell_draw(parameters, rng) for _ in range(20_000)]
    assert statistics.median(dwells) == pytest.approx(20.09, rel=0.05)  # exp(3)
    assert 1.0 <= min(dwells) and max(dwells) <= 600.0


def test_unknown_parameters_in_a_calibration_file_are_refused_by_name():
    with pytest.raises(searcher_model.CalibrationError, match="unknown name.*patience_meen"):
        SearcherParameters.from_dict({"patience_meen": 2.0})
