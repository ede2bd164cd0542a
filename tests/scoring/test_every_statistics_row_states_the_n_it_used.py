"""Every statistics row states the n it used: unpaired, the bootstrap row resamples both systems'
sessions, so its n is both counts (the issue's study said 39, the first system's, where 77 were resampled);
paired, the pairs. Pure: scoring.lib.statistics, no database."""

import numpy as np

from scoring.lib.statistics import bootstrap_difference, compare_systems


def _sessions(n_a: int, n_b: int):
    rng = np.random.default_rng(29)
    values = np.concatenate([rng.normal(0.3, 0.1, n_a), rng.normal(0.35, 0.1, n_b)])
    systems = ["A"] * n_a + ["B"] * n_b
    participants = [f"P{i % 20:03d}" for i in range(n_a + n_b)]
    return values, systems, participants


def test_the_unpaired_bootstrap_row_counts_both_systems_sessions():
    values, systems, participants = _sessions(39, 38)
    result = compare_systems(values, systems, participants, paired=False, resamples=200)
    (difference,) = result.differences
    assert (difference.n, difference.n_first, difference.n_second) == (77, 39, 38)
    assert "n = 77: 39 on A and 38 on B" in difference.reading
    # The interval is the one the bootstrap of both systems' sessions gives.
    a, b = values[:39], values[39:]
    assert (difference.low, difference.high) == bootstrap_difference(a, b, paired=False, resamples=200)[1:]


def test_the_paired_bootstrap_row_counts_the_pairs():
    values, systems, participants = _sessions(40, 40)
    participants = [f"P{i % 40:03d}" for i in range(80)]
    result = compare_systems(values, systems, participants, paired=True, resamples=200)
    (difference,) = result.differences
    assert difference.n == 40 and "40 pairs of participant means resampled" in difference.reading


def test_every_test_states_its_n_in_its_row_and_its_reading():
    values, systems, participants = _sessions(39, 38)
    unpaired = compare_systems(values, systems, participants, paired=False, resamples=200)
    assert [(t.test, t.n) for t in unpaired.tests] == [
        ("one-way ANOVA (sessions)", 77),
        ("Welch t-test (sessions, unpaired)", 77),
    ]
    assert "Across 77 sessions" in unpaired.tests[0].reading
    assert "39 sessions on A, 38 on B" in unpaired.tests[1].reading
    participants = [f"P{i % 39:03d}" for i in range(77)]
    paired = compare_systems(values, systems, participants, paired=True, resamples=200)
    assert all(t.n == 38 for t in paired.tests)  # the participants who used both systems
    assert any("(38 participants)" in t.reading for t in paired.tests)
