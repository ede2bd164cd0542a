"""TBG and U-measure take when each result was first on the participant's screen (measured exposure,
TrailQuery.reached) in place of the modelled clock. With the reach the model would give, nothing changes; a
result reached later decays more, so TBG never rises; the docs' worked example with reached times."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.lib.session import encode_sessions
from scoring.lib.session_measures import MeasureParams, TrailQuery, score_measures

GRADES = {"a": 2, "b": 1, "c": 3, "x": 0}
LISTS = [["x", "a", "b"], ["c", "b"]]


def timed(trail):
    params = MeasureParams(k=3, grade_max=3)
    batch = encode_sessions(["T"], [LISTS], {"T": GRADES}, depth=3)
    values = score_measures(batch, ("tbg", "u_measure"), params, trails=[trail])
    return float(values["tbg"][0]), float(values["u_measure"][0])


OBSERVED = [TrailQuery(start=0.0, opened={2: 30.0}), TrailQuery(start=60.0, opened={})]


def test_the_model_s_own_reach_changes_nothing():
    # The model reaches x at 0, a at 4.4, b at 4.4 + 4.4 + 30 (a read), c at 60, b again at 64.4.
    modelled = [
        TrailQuery(start=0.0, opened={2: 30.0}, reached={1: 0.0, 2: 4.4, 3: 38.8}),
        TrailQuery(start=60.0, opened={}, reached={1: 0.0, 2: 4.4}),
    ]
    assert timed(modelled) == pytest.approx(timed(OBSERVED), abs=1e-12)


def test_the_worked_example_with_measured_reach():
    """docs/scoring-sessions.md: a first on screen 2 s after Q1 started, c 10 s after Q2 (at 70 s)."""
    tbg, _ = timed(
        [
            TrailQuery(start=0.0, opened={2: 30.0}, reached={2: 2.0}),
            TrailQuery(start=60.0, opened={}, reached={1: 10.0}),
        ]
    )
    g = 0.64 * 0.77
    a = g * 2 ** (-2.0 / 224)
    c = g * 2 ** (-70.0 / 224)
    b = g * 2 ** (-36.4 / 224)  # b is first reached in Q1, after a's summary and reading: 2 + 4.4 + 30 s
    assert tbg == pytest.approx(a + b + c, abs=1e-9)
    assert round(tbg, 5) == 1.32689  # as docs/scoring-sessions.md says


@settings(max_examples=200, deadline=None)
@given(st.floats(0, 300), st.floats(0, 60))
def test_reaching_a_result_later_never_gains_more(first, extra):
    early = [TrailQuery(start=0.0, opened={}, reached={2: first}), TrailQuery(start=400.0, opened={})]
    late = [TrailQuery(start=0.0, opened={}, reached={2: first + extra}), TrailQuery(start=400.0, opened={})]
    assert timed(late)[0] <= timed(early)[0] + 1e-12
    assert all(math.isfinite(v) for v in timed(late))
