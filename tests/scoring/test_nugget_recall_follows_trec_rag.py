"""Nugget recall (scoring/lib/generative/nuggets.py) as the TREC 2024 RAG track defines it: by hand, and on a
three-topic fixture against a separate helper written from the definitions (Pradeep et al., arXiv
2411.09607; castorini/nuggetizer's calculate_nugget_scores)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.lib.generative import (
    NuggetError,
    mean_scores,
    nugget_curve,
    nugget_scores,
    session_nugget_scores,
)

# Three topics: nuggets with their importance, and one answer's assignments (a nugget left out: not_support).
TOPICS = {
    "t1": (
        {"n1": "vital", "n2": "vital", "n3": "okay", "n4": "okay"},
        {"n1": "support", "n2": "partial_support", "n3": "support", "n4": "not_support"},
    ),
    "t2": (
        {"n1": "vital", "n2": "okay", "n3": "okay"},
        {"n1": "partial_support", "n3": "partial_support"},
    ),
    "t3": ({"n1": "okay", "n2": "okay"}, {"n1": "support"}),  # no vital nugget
}


def _by_the_definitions(importance, assignment):
    """The track's six scores, counted the way the definitions read (support 1, partial 0.5; vital weight 1,
    okay 0.5), independently of the library."""
    full = [n for n in importance if assignment.get(n) == "support"]
    half = [n for n in importance if assignment.get(n) == "partial_support"]
    vital = [n for n in importance if importance[n] == "vital"]
    okay = [n for n in importance if importance[n] == "okay"]

    def share(strict, among):
        if not among:
            return 0.0
        got = len([n for n in among if n in full]) + (
            0 if strict else 0.5 * len([n for n in among if n in half])
        )
        return got / len(among)

    def weighted(strict):
        total = len(vital) + 0.5 * len(okay)
        got = sum((1.0 if importance[n] == "vital" else 0.5) for n in full)
        if not strict:
            got += sum(0.5 * (1.0 if importance[n] == "vital" else 0.5) for n in half)
        return got / total

    return {
        "all": share(False, list(importance)),
        "all_strict": share(True, list(importance)),
        "vital": share(False, vital),
        "vital_strict": share(True, vital),
        "weighted": weighted(False),
        "weighted_strict": weighted(True),
    }


def test_the_first_topic_by_hand():
    s = nugget_scores(*TOPICS["t1"])
    assert (s.all, s.all_strict) == (pytest.approx(2.5 / 4), pytest.approx(2 / 4))
    assert (s.vital, s.vital_strict) == (pytest.approx(1.5 / 2), pytest.approx(1 / 2))
    # weights 1, 1, 0.5, 0.5 (sum 3): 1*1 + 1*0.5 + 0.5*1 + 0 = 2; strict 1 + 0.5 = 1.5
    assert (s.weighted, s.weighted_strict) == (pytest.approx(2 / 3), pytest.approx(1.5 / 3))
    assert (s.nuggets, s.vital_nuggets) == (4, 2)


def test_three_topics_equal_the_definitions_and_their_run_mean():
    scores = []
    for importance, assignment in TOPICS.values():
        s = nugget_scores(importance, assignment)
        expected = _by_the_definitions(importance, assignment)
        assert {k: getattr(s, k) for k in expected} == pytest.approx(expected)
        scores.append(s)
    t3 = scores[2]
    assert t3.vital == 0.0 and t3.vital_strict == 0.0 and t3.vital_nuggets == 0  # reported, not NaN
    run = mean_scores(scores)
    assert run["vital_strict"] == pytest.approx((0.5 + 0.0 + 0.0) / 3)
    assert run["all"] == pytest.approx((2.5 / 4 + 1 / 3 + 1 / 2) / 3)


def test_a_session_is_credited_with_each_nugget_s_best_turn():
    importance = TOPICS["t1"][0]
    turns = [{"n1": "partial_support"}, {"n1": "support", "n2": "partial_support"}, {"n1": "not_support"}]
    s = session_nugget_scores(importance, turns)
    assert s.vital == pytest.approx(1.5 / 2) and s.vital_strict == pytest.approx(1 / 2)
    curve = nugget_curve(importance, turns)
    assert [c.vital for c in curve] == [pytest.approx(0.25), pytest.approx(0.75), pytest.approx(0.75)]


def test_labels_outside_the_scheme_are_refused_with_the_nugget_named():
    with pytest.raises(NuggetError, match="nugget 'n1': assignment 'yes'"):
        nugget_scores({"n1": "vital"}, {"n1": "yes"})
    with pytest.raises(NuggetError, match="nugget 'n9'"):
        nugget_scores({"n1": "vital"}, {"n9": "support"})
    with pytest.raises(NuggetError, match="importance 'must'"):
        nugget_scores({"n1": "must"}, {})


nuggets_st = st.dictionaries(
    st.sampled_from([f"n{i}" for i in range(8)]), st.sampled_from(["vital", "okay"]), min_size=1
)


@settings(max_examples=100, deadline=None)
@given(nuggets_st, st.data())
def test_strict_never_exceeds_half_credit_and_every_score_is_the_definitions(importance, data):
    assignment = data.draw(
        st.fixed_dictionaries(
            {n: st.sampled_from(["support", "partial_support", "not_support"]) for n in importance}
        )
    )
    s = nugget_scores(importance, assignment)
    assert s.all_strict <= s.all and s.vital_strict <= s.vital and s.weighted_strict <= s.weighted
    expected = _by_the_definitions(importance, assignment)
    assert {k: getattr(s, k) for k in expected} == pytest.approx(expected)
    later = data.draw(
        st.fixed_dictionaries({n: st.sampled_from(["support", "partial_support"]) for n in importance})
    )
    curve = nugget_curve(importance, [assignment, later])
    assert curve[1].all >= curve[0].all and curve[1].vital_strict >= curve[0].vital_strict
