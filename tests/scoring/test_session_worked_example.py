"""The SPEC's session worked example (SPEC-metrics.md, "Worked examples"), and a kanoulas2011 case by hand."""

import math

import numpy as np
import pytest

from scoring.lib.session import SessionParams, encode_sessions, score_sessions, session_grid

QRELS = {"T": {"d1": 3, "d2": 2, "d3": 1, "d4": 3, "d5": 0, "d6": 2, "d7": 1}}
QUERIES = [["d9", "d5", "d3"], ["d2", "d8", "d1", "d6", "d3"], ["d4", "d1", "d7", "d2", "d10"]]
SPEC_CURVE = [
    0,
    0,
    0.3869,
    0.3869,
    0.3869,
    7.0535,
    7.0535,
    32.8437,
    35.0659,
    35.2666,
    91.0552,
    118.9495,
    119.1653,
    121.0249,
    121.0249,
]
SPEC_IDEAL = [
    100,
    150,
    153.8685,
    157.2019,
    157.5029,
    224.1696,
    257.5029,
    260.0819,
    262.3041,
    262.5048,
    318.2934,
    346.1877,
    348.3459,
    350.2055,
    350.3735,
]


def score_example(**options):
    batch = encode_sessions(["T"], [QUERIES], QRELS, depth=5)
    return score_sessions(batch, SessionParams(top=5, **options))


def test_the_session_curve_is_the_specs_to_four_decimals():
    np.testing.assert_allclose(score_example().curve[0], SPEC_CURVE, atol=5e-5)


def test_the_ideal_session_curve_is_the_specs_to_four_decimals():
    np.testing.assert_allclose(score_example().ideal[0], SPEC_IDEAL, atol=5e-5)


def test_the_normalized_final_value_is_0_3454():
    scores = score_example()
    assert round(float(scores.normalized_final[0]), 4) == 0.3454
    assert scores.normalized[0, -1] == pytest.approx(scores.normalized_final[0])
    assert round(float(scores.final[0]), 4) == 121.0249


def test_with_duplicates_first_the_final_value_is_91_0703():
    assert round(float(score_example(duplicates="first").final[0]), 4) == 91.0703


def test_the_summaries_follow_from_the_curve():
    scores = score_example()
    per_query = scores.per_query_of(0)
    # Each query's sDCG is its segment's increase of the curve: Q1 ends at 0.3869, Q2 at 35.2666.
    np.testing.assert_allclose(per_query, [0.3869, 35.2666 - 0.3869, 121.0249 - 35.2666], atol=1e-4)
    assert scores.last_query[0] == pytest.approx(per_query[-1])
    assert scores.best_query[0] == pytest.approx(max(per_query))
    assert scores.average[0] == pytest.approx(np.mean(scores.curve[0]))


def test_the_grid_point_of_the_paper_settings_is_the_single_run():
    batch = encode_sessions(["T"], [QUERIES], QRELS, depth=5)
    grid = session_grid(batch, SessionParams(top=5), b_values=[1.5, 2, 10], bq_values=[4, 9])
    assert round(float(grid.normalized_final[1, 0, 0]), 4) == 0.3454
    assert round(float(grid.final[1, 0, 0]), 4) == 121.0249


def test_kanoulas2011_by_hand_with_a_negative_grade():
    # Grades a:2, b:-1, c:1 give gains 3, -0.5, 1; b = 2, bq = 4, top 2.
    # Rank discounts 1 and 1/log2(3) = 0.630930; query discounts 1 and 1/log4(5) = 0.861353.
    qrels = {"K": {"a": 2, "b": -1, "c": 1}}
    batch = encode_sessions(["K"], [[["b", "a"], ["c", "x"]]], qrels, depth=2)
    scores = score_sessions(batch, SessionParams(top=2, formulation="kanoulas2011"))
    r2, q2 = 1 / math.log2(3), math.log(4) / math.log(5)
    assert round(r2, 6) == 0.630930 and round(q2, 6) == 0.861353
    # Q1: -0.5, then -0.5 + 3 * 0.630930 = 1.392789; Q2: + 1 * 0.861353 = 2.254142, then + 0 for x.
    np.testing.assert_allclose(scores.curve[0], [-0.5, 1.392789, 2.254142, 2.254142], atol=1e-6)
    # Ideal: the positive gains 3, 1 per query: 3, 3.630930, + 3 * 0.861353 = 6.214989, + 0.543454 = 6.758443.
    np.testing.assert_allclose(scores.ideal[0], [3, 3.630930, 6.214989, 6.758443], atol=1e-6)
    np.testing.assert_allclose(
        scores.normalized[0],
        [-0.5 / 3, 1.392789 / 3.630930, 2.254142 / 6.214989, 2.254142 / 6.758443],
        atol=1e-6,
    )
    np.testing.assert_allclose(scores.per_query_of(0), [1.392789, 0.861353], atol=1e-6)
    assert round(float(scores.normalized_final[0]), 4) == 0.3335
    assert scores.best_query[0] == pytest.approx(1.392789, abs=1e-6)
    assert scores.last_query[0] == pytest.approx(0.861353, abs=1e-6)


def test_kanoulas2011_discounts_the_second_query_less_than_ecir_2008():
    # One relevant document at rank 1 of the second query: its gain times the query discount.
    batch = encode_sessions(["K"], [[["x"], ["a"]]], {"K": {"a": 1}}, depth=1)
    ecir = score_sessions(batch, SessionParams(top=1, weights=(0, 1)))
    kanoulas = score_sessions(batch, SessionParams(top=1, formulation="kanoulas2011"))
    assert round(float(ecir.final[0]), 3) == 0.667
    assert round(float(kanoulas.final[0]), 3) == 0.861
