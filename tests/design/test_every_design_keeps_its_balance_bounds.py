"""The bounds docs/latin-square.md states for each design, checked over many sizes (pure; no database):
within-subject with any number of scenarios and systems (3 scenarios on 2...), and between-subjects."""

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studies.design.latin_square import (
    BETWEEN,
    WITHIN,
    assignment_block_size,
    assignment_plan,
    balance_report,
    participant_assignment,
    participant_system_spread,
)

# Sizes whose systems cannot share the scenarios equally (the ones refused before).
UNEVEN = [(k, m) for k in range(1, 10) for m in range(2, 6) if k % m]
ALL = [(k, m) for k in range(1, 10) for m in range(1, 6)]


def _prefix_worst(plans, k, m, design):
    worst: dict = {}
    for p in range(1, len(plans) + 1):
        for key, value in balance_report(plans[:p], k, m, design).items():
            worst[key] = max(worst.get(key, 0), value)
    return worst


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(UNEVEN), st.integers(0, 2))
def test_uneven_within_subject_plans_are_bounded(pair, blocks):
    k, m = pair
    block = assignment_block_size(k, m)
    plans = assignment_plan(range(k), range(m), (blocks + 1) * block)
    for plan in plans:
        assert sorted(s for s, _ in plan) == list(range(k))  # every scenario once
        # per participant, the systems' task counts differ by at most one (k < m: each system at most once)
        assert participant_system_spread(plan, range(m)) <= 1
        systems = [u for _, u in plan]
        assert systems == sorted(systems, key=systems.index)  # consecutive blocks of one system each
    # every complete block is exactly balanced
    for b in range(blocks + 1):
        assert set(balance_report(plans[b * block : (b + 1) * block], k, m).values()) == {0}
    worst = _prefix_worst(plans, k, m, WITHIN)
    assert worst["scenario_system"] <= 1, worst  # at every number of participants
    assert worst["scenario_position"] < max(m, 2), worst
    assert worst["system_position"] < 1, worst  # the rotations in turn
    if m == 2:  # odd k <= 9
        assert worst["scenario_position"] <= 1, worst


def test_three_scenarios_on_two_systems():
    plans = assignment_plan(["S1", "S2", "S3"], ["A", "B"], 12)
    assert assignment_block_size(3, 2) == 12
    for plan in plans:
        assert sorted(Counter(u for _, u in plan).values()) == [1, 2]
    cells = Counter(pair for plan in plans for pair in plan)
    assert cells == Counter({(s, u): 6 for s in ["S1", "S2", "S3"] for u in ["A", "B"]})
    positions = Counter((s, j) for plan in plans for j, (s, _) in enumerate(plan))
    assert set(positions.values()) == {4}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(ALL), st.integers(0, 2))
def test_between_subject_plans_keep_one_system_each_and_balanced_arms(pair, blocks):
    k, m = pair
    block = assignment_block_size(k, m, BETWEEN)
    plans = assignment_plan(range(k), range(m), (blocks + 1) * block, BETWEEN)
    for i, plan in enumerate(plans):
        assert sorted(s for s, _ in plan) == list(range(k))
        assert {u for _, u in plan} == {i % m}  # one system, the arms in turn
    for b in range(blocks + 1):
        report = balance_report(plans[b * block : (b + 1) * block], k, m, BETWEEN)
        assert set(report.values()) == {0}, report
    worst = _prefix_worst(plans, k, m, BETWEEN)
    assert worst["scenario_system"] < 1 and worst["system_position"] < 1, worst  # equal arms
    assert worst["arm_scenario_position"] < 1, worst  # order counterbalanced within each arm
    assert worst["scenario_position"] < 2, worst
    if k % m == 0 or m <= 2:
        assert worst["scenario_position"] <= 1, worst


@pytest.mark.parametrize("design", [WITHIN, BETWEEN])
@pytest.mark.parametrize(("k", "m"), [(3, 2), (5, 3), (4, 2), (2, 4)])
def test_a_participants_plan_does_not_depend_on_how_many_are_enrolled(design, k, m):
    plans = assignment_plan(range(k), "ABCDE"[:m], 40, design)
    block = assignment_block_size(k, m, design)
    for i in range(40):
        assert participant_assignment(range(k), "ABCDE"[:m], i, design) == plans[i]
        assert participant_assignment(range(k), "ABCDE"[:m], i + block, design) == plans[i]


def test_an_unknown_design_is_refused():
    with pytest.raises(ValueError, match="design"):
        assignment_plan(range(3), range(2), 1, "crossover")


def test_eleven_scenarios_on_two_systems_go_in_rounds_within_the_stated_bounds():
    block = assignment_block_size(11, 2)
    plans = assignment_plan(range(11), range(2), 2 * block)
    worst = _prefix_worst(plans, 11, 2, WITHIN)
    assert worst["scenario_system"] < 1 and worst["system_position"] < 1, worst
    assert worst["scenario_position"] < 2, worst
    assert set(balance_report(plans[:block], 11, 2).values()) == {0}
