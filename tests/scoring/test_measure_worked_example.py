"""The worked example of docs/scoring-sessions.md ("Other session measures"), computed there by hand.

Judgments a:2, b:1, c:3 (x unjudged); k = 2, b = 2, bq = 4; Q1 = [x, a], Q2 = [c, b].
"""

import numpy as np
import pytest

from scoring.lib.session import SessionParams, encode_sessions, score_sessions
from scoring.lib.session_measures import (
    MEASURES,
    TIME_MEASURES,
    MeasureParams,
    TrailQuery,
    esndcg_monte_carlo,
    score_measures,
)

QRELS = {"T": {"a": 2, "b": 1, "c": 3}}
LISTS = [["x", "a"], ["c", "b"]]
PARAMS = MeasureParams(k=2, grade_max=3)  # the scale 0..3 (sRBP needs its top grade given)
# The observed trail of the example: Q1 issued at 0 s, a (rank 2) opened and read for 30 s; Q2 issued at 60 s,
# nothing opened.
TRAIL = [TrailQuery(start=0.0, opened={2: 30.0}), TrailQuery(start=60.0, opened={})]


@pytest.fixture
def batch():
    return encode_sessions(["T"], [LISTS], QRELS, depth=2)


def test_each_measure_is_the_value_computed_by_hand(batch):
    values = {name: float(v[0]) for name, v in score_measures(batch, MEASURES, PARAMS).items()}
    by_hand = {
        # DCG1 = 3/log2 3 = 1.89279, DCG2 = 7 + 1/log2 3 = 7.63093; sDCG = DCG1 + DCG2 / log4 5 = 8.46571.
        "sdcg_per_query": 8.46571 / 2,
        # ideal top 2 = (7, 3): IDCG = 8.89279, times (1 + 1/log4 5) = 16.55256.
        "nsdcg": 8.46571 / 16.55256,
        "ndcg_mean": (0.21285 + 0.85810) / 2,
        "ndcg_max": 0.85810,
        "ndcg_first": 0.21285,
        "ndcg_last": 0.85810,
        # six paths with p_reformulate 0.9, p_down 0.7 (the docs' table).
        "esndcg": 0.07 * 0.21285 + 0.081 * 0.49664 + 0.189 * 0.52343 + 0.189 * 0.57414 + 0.441 * 0.62000,
        # (1 - p) [0.4 * 2/3 + (0.4 / 0.6) (1 + 0.4 * 1/3)] with p = 0.8, b = 0.5.
        "srbp": 0.2 * (0.4 * 2 / 3 + (2 / 3) * (1 + 0.4 / 3)),
        # gain 0.4928 at 10.952 s, 26.104 s and 41.256 s (model times), half-life 224 s.
        "tbg": 0.4928 * sum(np.exp(-t * np.log(2) / 224) for t in (10.952, 26.104, 41.256)),
        # grades 2, 3, 1 read by 25.6 s, 46.8 s and 68.0 s, L = 600 s.
        "u_measure": 2 * (1 - 25.6 / 600) + 3 * (1 - 46.8 / 600) + 1 * (1 - 68.0 / 600),
    }
    for name, expected in by_hand.items():
        assert values[name] == pytest.approx(expected, abs=5e-5), name
    assert values["esndcg_mc"] == pytest.approx(values["esndcg"], abs=0.005)


def test_the_observed_trail_times_tbg_and_u(batch):
    values = score_measures(batch, TIME_MEASURES, PARAMS, trails=[TRAIL])
    decay = np.log(2) / 224
    # a reached at 4.4 s; Q2 starts at 60 s: c at 60 s, b at 64.4 s. U: only a was read, by 38.8 s.
    assert values["tbg"][0] == pytest.approx(
        0.4928 * sum(np.exp(-decay * t) for t in (4.4, 60.0, 64.4)), rel=1e-12
    )
    assert values["u_measure"][0] == pytest.approx(2 * (1 - 38.8 / 600), rel=1e-12)


def test_the_exact_esndcg_lies_in_the_95_percent_interval_of_10000_sampled_paths(batch):
    exact = float(score_measures(batch, ["esndcg"], PARAMS)["esndcg"][0])
    for seed in (1, 2, 3):
        mean, error = esndcg_monte_carlo(batch, 0, PARAMS, rng=np.random.default_rng(seed))
        assert abs(mean - exact) <= 1.96 * error, (seed, mean, error, exact)
        assert error < 0.002  # 10,000 paths: the interval is narrow enough to mean something


def test_nsdcg_is_the_kanoulas2011_normalized_final_of_the_session_library(batch):
    params = SessionParams(formulation="kanoulas2011", top=2, b=2, bq=4)
    library = score_sessions(batch, params)
    values = score_measures(batch, ["nsdcg", "sdcg_per_query"], PARAMS)
    assert values["nsdcg"][0] == pytest.approx(library.normalized_final[0], rel=1e-12)
    assert values["sdcg_per_query"][0] * 2 == pytest.approx(library.final[0], rel=1e-12)


def test_the_spec_session_example_agrees_with_the_session_library_under_kanoulas2011():
    qrels = {"T": {"d1": 3, "d2": 2, "d3": 1, "d4": 3, "d5": 0, "d6": 2, "d7": 1}}
    lists = [["d9", "d5", "d3"], ["d2", "d8", "d1", "d6", "d3"], ["d4", "d1", "d7", "d2", "d10"]]
    batch = encode_sessions(["T"], [lists], qrels, depth=5)
    library = score_sessions(batch, SessionParams(formulation="kanoulas2011", top=5))
    values = score_measures(batch, ["nsdcg", "ndcg_last"], MeasureParams(k=5))
    assert values["nsdcg"][0] == pytest.approx(library.normalized_final[0], rel=1e-12)
    assert values["ndcg_last"][0] == pytest.approx(
        library.per_query_of(0)[-1]
        / (np.log(4) / np.log(6))
        / library.ideal_final[0]
        * (1 + np.log(4) / np.log(5) + np.log(4) / np.log(6)),
        rel=1e-12,
    )
