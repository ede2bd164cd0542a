"""Properties of session DCG over generative turns (scoring/lib/generative/turns.py), by hypothesis."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.lib.generative import ResultsPage, Turn, TurnParams, score_generative_session
from scoring.lib.metrics import cumulative_gain, discounted_cumulative_gain, grade_gains

DOCS = [f"d{i}" for i in range(12)]
grades_st = st.dictionaries(st.sampled_from(DOCS), st.integers(0, 3), max_size=12)
doc_lists = st.lists(st.sampled_from(DOCS), max_size=8)
turns_st = st.builds(
    lambda cited, shown, seen: Turn(cited, shown=shown, exposed={d: d in seen for d in DOCS}),
    doc_lists,
    doc_lists,
    st.sets(st.sampled_from(DOCS)),
)
steps_st = st.lists(
    st.one_of(
        turns_st,
        st.builds(
            lambda r, seen: ResultsPage(r, exposed={d: d in seen for d in DOCS}),
            st.lists(st.sampled_from(DOCS), unique=True, max_size=8),
            st.sets(st.sampled_from(DOCS)),
        ),
    ),
    max_size=5,
)
params_st = st.builds(
    TurnParams,
    variant=st.sampled_from(["cited", "cited_then_retrieved", "exposed"]),
    b=st.sampled_from([1.5, 2.0, 4.0, 10.0]),
    bq=st.sampled_from([1.5, 2.0, 4.0, 10.0, 100.0]),
    top=st.integers(1, 10),
    duplicates=st.sampled_from(["every", "first"]),
)
NON_RELEVANT = "x0"  # judged 0 in every example below


def _with_zero(grades):
    return {**grades, NON_RELEVANT: 0}


@settings(max_examples=80, deadline=None)
@given(doc_lists, grades_st, st.sampled_from([1.5, 4.0, 999.0]))
def test_a_session_of_one_turn_is_the_dcg_of_its_cited_list(cited, grades, bq):
    scores = score_generative_session([Turn(cited)], grades, TurnParams(bq=bq, top=50))
    ranked = list(dict.fromkeys(cited))
    gains = grade_gains(np.array([grades.get(d, -1) for d in ranked], dtype=int), (0, 1, 10, 100))
    expected = discounted_cumulative_gain(gains, "2008", 2.0)[-1] if ranked else 0.0
    assert scores.final == pytest.approx(expected)
    # With b large every rank discount tends to 1: the DCG tends to the plain cumulated gain, from below
    # (the deepest rank's discount 1 / (1 + log_b n) bounds every other).
    cg = cumulative_gain(gains)[-1] if ranked else 0.0
    for b in (1e3, 1e12, 1e300):
        flat = score_generative_session([Turn(cited)], grades, TurnParams(b=b, top=50)).final
        deepest = 1 / (1 + np.log(max(len(ranked), 1)) / np.log(b))
        assert cg * deepest - 1e-9 <= flat <= cg + 1e-9


@settings(max_examples=80, deadline=None)
@given(steps_st, grades_st, params_st, doc_lists)
def test_appending_a_non_relevant_turn_changes_nothing(steps, grades, params, shown):
    grades = _with_zero(grades)
    before = score_generative_session(steps, grades, params)
    extra = Turn([NON_RELEVANT], shown=[NON_RELEVANT], exposed={NON_RELEVANT: True})
    after = score_generative_session([*steps, extra], grades, params)
    assert after.final == pytest.approx(before.final)
    np.testing.assert_allclose(after.per_step[:-1], before.per_step)


@settings(max_examples=80, deadline=None)
@given(steps_st, grades_st, params_st, st.integers(0, 5))
def test_adding_a_non_relevant_citation_never_raises_the_gain(steps, grades, params, where):
    grades = _with_zero(grades)
    turns = [i for i, s in enumerate(steps) if isinstance(s, Turn)]
    if not turns:
        return
    k = turns[where % len(turns)]
    turn = steps[k]
    cited = list(turn.citations)
    cited.insert(where % (len(cited) + 1), NON_RELEVANT)
    changed = list(steps)
    changed[k] = Turn(cited, shown=turn.shown, exposed={**turn.exposed, NON_RELEVANT: True})
    before = score_generative_session(steps, grades, params).final
    assert score_generative_session(changed, grades, params).final <= before + 1e-9


@settings(max_examples=80, deadline=None)
@given(steps_st, grades_st, params_st)
def test_a_larger_bq_never_lowers_the_session_gain(steps, grades, params):
    values = [
        score_generative_session(steps, grades, TurnParams(**{**params.__dict__, "bq": bq})).final
        for bq in (1.2, 2.0, 4.0, 10.0, 999.0)
    ]
    assert all(a <= b + 1e-9 for a, b in zip(values, values[1:], strict=False))


@settings(max_examples=80, deadline=None)
@given(steps_st, grades_st, params_st)
def test_a_later_turn_is_discounted_as_bq_says(steps, grades, params):
    grades = _with_zero(grades)
    if not steps:
        return
    before = score_generative_session(steps, grades, params)
    blank = Turn([NON_RELEVANT], exposed={NON_RELEVANT: True})
    # Every step moves one place later: step s's DCG is now divided by 1 + log_bq (s + 1), not 1 + log_bq s.
    # (Under duplicates "first" too: the blank turn gains nothing, so it takes no first showing away.)
    after = score_generative_session([blank, *steps], grades, params)
    s = np.arange(1, len(steps) + 1)
    ratio = (1 + np.log(s) / np.log(params.bq)) / (1 + np.log(s + 1) / np.log(params.bq))
    np.testing.assert_allclose(after.per_step[1:], before.per_step * ratio, atol=1e-9)
    np.testing.assert_allclose(after.dcg[1:], before.dcg, atol=1e-9)


@settings(max_examples=80, deadline=None)
@given(steps_st, grades_st, params_st)
def test_the_variants_nest(steps, grades, params):
    def final(variant):
        return score_generative_session(steps, grades, TurnParams(**{**params.__dict__, "variant": variant}))

    cited, both, exposed = final("cited"), final("cited_then_retrieved"), final("exposed")
    if params.duplicates == "every":  # step by step; under "first" a gain may move to a later step
        assert np.all(cited.per_step <= both.per_step + 1e-9)
        assert np.all(exposed.per_step <= both.per_step + 1e-9)
    assert exposed.final <= both.final + 1e-9
    if params.duplicates == "every":
        assert cited.final <= both.final + 1e-9
