"""scoring.lib.conclusion_change: the system order, Kendall's tau and the paired test under two references,
checked on data whose answer is known, and tau against its definition counted by hand."""

from itertools import combinations

import numpy as np
import pytest

from scoring.lib.conclusion_change import conclusion_change, kendall_tau, order_text, system_order

# Eight participants each used A and B on one scenario; A is clearly higher under the first reference.
PARTICIPANTS = [f"P{n}" for n in range(8) for _ in range(2)]
SYSTEMS = ["A", "B"] * 8
SCENARIOS = ["S1", "S2"] * 8
A_HIGH = [5.0 + 0.1 * n if s == "A" else 1.0 + 0.2 * n for n, s in enumerate(SYSTEMS)]


def tau_by_counting(x, y):
    """Tau-b from its definition: (P - Q) / sqrt((P + Q + Tx)(P + Q + Ty))."""
    p = q = tx = ty = 0
    for i, j in combinations(range(len(x)), 2):
        dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
        if dx and dy:
            p, q = p + (dx == dy), q + (dx != dy)
        elif dx:
            tx += 1
        elif dy:
            ty += 1
    return (p - q) / np.sqrt((p + q + tx) * (p + q + ty))


def test_kendalls_tau_is_tau_b_as_defined_with_ties():
    rng = np.random.default_rng(30)
    x, y = rng.integers(0, 4, 25).astype(float), rng.integers(0, 4, 25).astype(float)
    assert kendall_tau(x, y).tau == pytest.approx(tau_by_counting(x, y), abs=1e-12)
    assert kendall_tau([1, 2, 3], [3, 2, 1]).tau == pytest.approx(-1.0)


def test_kendalls_tau_is_undefined_rather_than_made_up():
    assert kendall_tau([1.0], [2.0]).tau is None
    assert kendall_tau([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]).tau is None


def test_the_order_puts_the_highest_first_and_shows_equal_means():
    means = {"B": 2.0, "A": 3.0, "C": 2.0}
    assert system_order(means) == ["A", "B", "C"]
    assert order_text(system_order(means), means) == "A > B = C"


def test_the_same_references_hold_the_conclusion():
    change = conclusion_change(A_HIGH, A_HIGH, SYSTEMS, PARTICIPANTS, SCENARIOS, names=("v1", "v2"))
    assert change.order_holds and change.significance_holds
    assert change.tau_sessions.tau == pytest.approx(1.0) and change.tau_cells.tau == pytest.approx(1.0)
    assert change.before.tests[0].test.startswith("paired t-test") and change.before.tests[0].significant
    assert change.sentence.startswith("The conclusion holds: the same order of systems (A > B)")
    assert "A vs B significant under both" in change.sentence


def test_a_flipped_order_changes_the_conclusion_and_says_how():
    flipped = [v if s == "A" else v + 6.0 for v, s in zip(A_HIGH, SYSTEMS, strict=True)]
    change = conclusion_change(A_HIGH, flipped, SYSTEMS, PARTICIPANTS, SCENARIOS, names=("v1", "v2"))
    assert not change.order_holds and not change.significance_holds
    assert change.before.order == ["A", "B"] and change.after.order == ["B", "A"]
    assert change.tau_systems.tau == pytest.approx(-1.0)
    assert change.sentence.startswith(
        "The conclusion changes: the order of systems A > B under v1 becomes B > A"
    )
    assert change.after.tests[0].higher == "B" and change.after.tests[0].significant


def test_losing_significance_alone_changes_the_conclusion():
    # Under v2 each participant's A is B's value plus 0.6 or minus 0.4 in turn: A stays higher on average
    # (by 0.1), far from significant.
    b_values = {n // 2: v for n, (v, s) in enumerate(zip(A_HIGH, SYSTEMS, strict=True)) if s == "B"}
    close = [
        v if s == "B" else b_values[n // 2] + (0.6 if (n // 2) % 2 else -0.4)
        for n, (v, s) in enumerate(zip(A_HIGH, SYSTEMS, strict=True))
    ]
    change = conclusion_change(A_HIGH, close, SYSTEMS, PARTICIPANTS, SCENARIOS, names=("v1", "v2"))
    assert change.order_holds and not change.significance_holds
    assert not change.after.tests[0].significant
    assert change.sentence.startswith(
        "The conclusion changes: the order of systems stays A > B, but A vs B is significant (p < 0.001, A "
        "higher) under v1 but not significant (p = "
    )


def test_without_pairs_the_test_is_welchs_over_sessions():
    blocks = [f"P{n}" for n in range(16)]  # every participant used one system only
    change = conclusion_change(A_HIGH, A_HIGH, SYSTEMS, blocks, SCENARIOS)
    assert change.before.tests[0].test.startswith("Welch")
    assert any("Unpaired" in note for note in change.before.notes)
