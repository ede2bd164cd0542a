"""Session DCG over generative turns (scoring/lib/generative/turns.py) on a mixed session computed by hand:
one results page, then two generative turns (docs/scoring-sessions.md, "Generative turns")."""

import numpy as np
import pytest

from scoring.lib.generative import ResultsPage, Turn, TurnParams, score_generative_session, step_list

# Grades 0..3, weights 0-1-10-100, b = 2, bq = 4, X = 10.
GRADES = {"d1": 3, "d2": 2, "d3": 1, "d4": 0}
STEPS = [
    ResultsPage(["d4", "d3", "d2"], exposed={"d4": True, "d3": True, "d2": False}),
    Turn(["d2", "d1", "d2"], shown=["d3", "d1", "d5"], exposed={"d2": True, "d3": True, "d1": False}),
    Turn(["d4", "d3"], exposed={"d4": True, "d3": True}),
]
# Rank discounts 1 / (1 + log2 i): 1, 0.5, 0.386853, 0.333333; step discounts 1 / (1 + log4 s): 1,
# 0.666667, 0.557886.
Q1 = 0 * 1 + 1 * 0.5 + 10 * 0.386853  # 4.368528
T2_CITED = (10 * 1 + 100 * 0.5) * 0.666667  # [d2, d1]: d2's second citation keeps its first place
T3 = (0 * 1 + 1 * 0.5) * 0.557886


def test_a_turn_s_list_is_its_citations_in_order_of_first_citation():
    turn = STEPS[1]
    assert step_list(turn, "cited") == (["d2", "d1"], [True, True])
    assert step_list(turn, "cited_then_retrieved") == (["d2", "d1", "d3", "d5"], [True] * 4)
    assert step_list(turn, "exposed") == (["d2", "d1", "d3", "d5"], [True, False, True, False])
    assert step_list(STEPS[0], "cited") == (["d4", "d3", "d2"], [True] * 3)  # a results page as shown


def test_cited_only():
    scores = score_generative_session(STEPS, GRADES, TurnParams(variant="cited"), ideal=GRADES)
    assert scores.kinds == ("query", "turn", "turn")
    np.testing.assert_allclose(scores.per_step, [Q1, T2_CITED, T3], rtol=1e-5)
    assert scores.final == pytest.approx(44.647471, rel=1e-6)
    np.testing.assert_allclose(
        scores.curve, [0, 0.5, 4.368528, 4.368528 + 6.666667, 44.368528, 44.368528, 44.647471], rtol=1e-6
    )
    # The ideal top X <100, 10, 1> gives DCG 105.386853 at every step: times 1 + 0.666667 + 0.557886.
    assert scores.ideal_final == pytest.approx(105.386853 * 2.224553, rel=1e-6)
    assert scores.normalized_final == pytest.approx(44.647471 / 234.438593, rel=1e-6)


def test_cited_then_retrieved_adds_what_was_shown_and_not_cited():
    scores = score_generative_session(STEPS, GRADES, TurnParams(variant="cited_then_retrieved"))
    t2 = (10 * 1 + 100 * 0.5 + 1 * 0.386853 + 0 * 0.333333) * 0.666667  # [d2, d1, d3, d5]
    np.testing.assert_allclose(scores.per_step, [Q1, t2, T3], rtol=1e-5)
    assert scores.final == pytest.approx(44.905373, rel=1e-6)


def test_exposed_counts_only_what_was_on_screen_in_its_place():
    scores = score_generative_session(STEPS, GRADES, TurnParams(variant="exposed"))
    q1 = 1 * 0.5  # d2 was not on screen
    t2 = (10 * 1 + 0 + 1 * 0.386853) * 0.666667  # d1 cited but scrolled off: its place kept, no gain
    np.testing.assert_allclose(scores.per_step, [q1, t2, T3], rtol=1e-5)
    assert scores.final == pytest.approx(7.703511, rel=1e-6)


def test_a_document_gains_once_under_duplicates_first():
    scores = score_generative_session(STEPS, GRADES, TurnParams(duplicates="first"))
    # d2 gained on the results page; d3 too, so the last turn adds nothing.
    np.testing.assert_allclose(scores.per_step, [Q1, 100 * 0.5 * 0.666667, 0.0], rtol=1e-5)
    assert scores.final == pytest.approx(37.701861, rel=1e-6)


def test_the_exposed_variant_refuses_a_step_without_exposure_flags():
    with pytest.raises(ValueError, match="exposure flags"):
        score_generative_session([Turn(["d1"])], GRADES, TurnParams(variant="exposed"))
    with pytest.raises(ValueError, match="unknown variant"):
        TurnParams(variant="opened")
