"""Properties of studies.design.latin_square (pure Python; no database)."""

from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studies.design.latin_square import (
    assignment_block_size,
    assignment_plan,
    balance_report,
    balanced_latin_square,
    participant_assignment,
)

# (scenarios, systems) pairs with systems dividing scenarios, n = 1..12 (docs/latin-square.md).
PAIRS = [(k, m) for k in range(1, 13) for m in range(1, k + 1) if k % m == 0]


def indexed(plans, scenarios, systems):
    s_ix = {s: i for i, s in enumerate(scenarios)}
    u_ix = {u: i for i, u in enumerate(systems)}
    return [[(s_ix[s], u_ix[u]) for s, u in plan] for plan in plans]


# ---------------------------------------------------------------- Williams square


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=12))
def test_balanced_latin_square_is_williams_design(n):
    rows = balanced_latin_square(n)
    assert len(rows) == (n if n % 2 == 0 else 2 * n)
    reps = len(rows) // n
    for row in rows:
        assert sorted(row) == list(range(n))
    for pos in range(n):
        assert Counter(row[pos] for row in rows) == Counter({c: reps for c in range(n)})
    adjacent = Counter((row[j], row[j + 1]) for row in rows for j in range(n - 1))
    expected = {(a, b): reps for a in range(n) for b in range(n) if a != b}
    assert dict(adjacent) == expected


@pytest.mark.parametrize("n", [0, -1, -7])
def test_balanced_latin_square_rejects_n_below_one(n):
    with pytest.raises(ValueError):
        balanced_latin_square(n)


def test_balanced_latin_square_small_cases():
    assert balanced_latin_square(2) == [[0, 1], [1, 0]]
    assert balanced_latin_square(4) == [[0, 1, 3, 2], [1, 2, 0, 3], [2, 3, 1, 0], [3, 0, 2, 1]]


# ---------------------------------------------------------------- assignment plans


@st.composite
def designs(draw):
    k, m = draw(st.sampled_from(PAIRS))
    block = assignment_block_size(k, m)
    n = draw(st.integers(0, 3)) * block + draw(st.integers(0, block - 1))
    return k, m, n


@settings(max_examples=120, deadline=None)
@given(designs())
def test_assignment_plan_balance(design):
    k, m, n = design
    scenarios = [f"scenario-{i}" for i in range(k)]
    systems = [f"system-{i}" for i in range(m)]
    plans = assignment_plan(scenarios, systems, n)
    assert len(plans) == n
    for plan in plans:
        assert sorted(s for s, _ in plan) == sorted(scenarios)
        assert Counter(u for _, u in plan) == Counter({u: k // m for u in systems})

    ix = indexed(plans, scenarios, systems)
    block = assignment_block_size(k, m)
    complete = n - n % block
    assert set(balance_report(ix[:complete], k, m).values()) == {0}
    report = balance_report(ix, k, m)
    assert report["scenario_position"] <= 1
    assert report["scenario_system"] <= 1
    if m <= 2:  # scenario x system exact to the nearest integer, system x position within one
        assert report["scenario_system"] < 1
        assert report["system_position"] <= 1


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(PAIRS), st.integers(0, 60))
def test_assignment_plan_is_deterministic_and_prefix_stable(pair, i):
    k, m = pair
    scenarios, systems = list(range(k)), list("ABCDEFGHIJKL"[:m])
    later = assignment_plan(scenarios, systems, i + 1)
    assert later[:i] == assignment_plan(scenarios, systems, i)
    assert later[i] == participant_assignment(scenarios, systems, i)
    block = assignment_block_size(k, m)
    assert participant_assignment(scenarios, systems, i + block) == later[i]


def test_four_scenarios_two_systems_every_prefix_within_one():
    plans = assignment_plan(range(4), range(2), 64)
    for p in range(1, 65):
        report = balance_report(plans[:p], 4, 2)
        assert max(report.values()) <= 1, (p, report)
        assert report["scenario_system"] < 1, (p, report)
        if p % 8 == 0:
            assert set(report.values()) == {Fraction(0)}, p


def test_paper_design_32_participants():
    scenarios, systems = ["A", "B", "C", "D"], ["System 1", "System 2"]
    assert assignment_block_size(4, 2) == 8
    plans = assignment_plan(scenarios, systems, 32)
    pairs = Counter(pair for plan in plans for pair in plan)
    assert pairs == Counter({(s, u): 16 for s in scenarios for u in systems})
    positions = Counter((s, j) for plan in plans for j, (s, _) in enumerate(plan))
    assert positions == Counter({(s, j): 8 for s in scenarios for j in range(4)})
    system_positions = Counter((u, j) for plan in plans for j, (_, u) in enumerate(plan))
    assert system_positions == Counter({(u, j): 16 for u in systems for j in range(4)})


def test_paper_design_30_participants():
    scenarios, systems = ["A", "B", "C", "D"], ["System 1", "System 2"]
    plans = assignment_plan(scenarios, systems, 30)
    pairs = Counter(pair for plan in plans for pair in plan)
    assert pairs == Counter({(s, u): 15 for s in scenarios for u in systems})
    assert Counter(u for plan in plans for _, u in plan) == Counter({u: 60 for u in systems})
    for plan in plans:  # two scenarios on each system, one switch of system
        assert [u for _, u in plan] in (
            ["System 1"] * 2 + ["System 2"] * 2,
            ["System 2"] * 2 + ["System 1"] * 2,
        )


@pytest.mark.parametrize(
    ("scenarios", "systems", "n"),
    [
        ([], range(1), 1),
        (range(4), [], 1),
        (range(4), range(2), -1),
    ],
)
def test_assignment_plan_rejects_bad_input(scenarios, systems, n):
    with pytest.raises(ValueError):
        assignment_plan(list(scenarios), list(systems), n)


def test_assignment_block_size():
    assert assignment_block_size(4, 2) == 8
    assert assignment_block_size(3, 1) == 6
    assert assignment_block_size(6, 3) == 18
    assert assignment_block_size(3, 2) == 12  # uneven: docs/latin-square.md, "Any number of tasks"
    with pytest.raises(ValueError, match="design"):
        assignment_block_size(4, 2, "crossover")


@pytest.mark.parametrize("k", [7, 9, 11, 12])
def test_one_system_per_scenario_keeps_every_prefix_within_one(k):
    block = assignment_block_size(k, k)
    plans = assignment_plan(range(k), range(k), block)
    for p in range(1, block + 1):
        report = balance_report(plans[:p], k, k)
        assert report["scenario_position"] < 1 and report["scenario_system"] < 1, (p, report)
    assert set(balance_report(plans, k, k).values()) == {Fraction(0)}
