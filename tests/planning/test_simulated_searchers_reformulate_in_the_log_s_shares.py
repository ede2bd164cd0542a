"""The demo's searcher (studies/simulation/participants.py) changes its queries as the log's searchers did:
adding, swapping, dropping words or starting anew in the calibrated shares, and taking a new word from the
titles and snippets it read as often as the log's searchers took theirs from what they were shown."""

import random
from collections import Counter
from dataclasses import replace

import pytest

from studies.simulation.calibration import searcher_parameters
from studies.simulation.participants import SimulatedParticipant

SCENARIO = ["wing", "flutter", "swept", "transonic", "damping", "boundaries"]
READ = Counter({"aeroelastic": 5, "divergence": 4, "flutter": 3})


def _searcher(seed: int, **changes) -> SimulatedParticipant:
    # Only what _reformulate reads: no participant or database is needed to choose the next words.
    searcher = object.__new__(SimulatedParticipant)
    searcher.rng = random.Random(seed)
    searcher.parameters = replace(searcher_parameters(), **changes)
    searcher.shown_words = Counter(READ)
    return searcher


def _kind(before: list[str], after: list[str]) -> str:
    added, removed = set(after) - set(before), set(before) - set(after)
    if not set(before) & set(after):
        return "new"
    return "swap" if added and removed else "add" if added else "drop"


def test_the_kinds_of_change_come_in_the_calibrated_shares():
    searcher = _searcher(1)
    kinds = Counter(
        _kind(["wing", "flutter"], searcher._reformulate(["wing", "flutter"], SCENARIO)) for _ in range(6000)
    )
    for kind, share in searcher.parameters.reformulation.items():
        assert kinds[kind] / 6000 == pytest.approx(share, abs=0.025), kind


def test_a_searcher_who_always_learns_adds_words_it_read():
    searcher = _searcher(2, reformulation={"add": 1.0}, learned_terms=1.0)
    added = Counter()
    for _ in range(300):
        after = searcher._reformulate(["wing", "flutter"], SCENARIO)
        added.update(set(after) - {"wing", "flutter"})
    assert set(added) == {"aeroelastic", "divergence"}  # "flutter" was read but is in the query already


def test_a_searcher_who_never_learns_adds_the_scenario_s_words():
    searcher = _searcher(3, reformulation={"add": 1.0}, learned_terms=0.0)
    for _ in range(300):
        after = searcher._reformulate(["wing", "flutter"], SCENARIO)
        assert set(after) - {"wing", "flutter"} <= set(SCENARIO)


def test_with_nothing_read_the_words_come_from_the_scenario_even_for_a_learner():
    searcher = _searcher(4, reformulation={"swap": 1.0}, learned_terms=1.0)
    searcher.shown_words = Counter()
    after = searcher._reformulate(["wing", "flutter"], SCENARIO)
    assert len(after) == 2 and set(after) <= set(SCENARIO) and after != ["wing", "flutter"]


def test_a_one_word_query_is_never_dropped_to_nothing():
    searcher = _searcher(5, reformulation={"drop": 1.0})
    assert all(len(searcher._reformulate(["wing"], SCENARIO)) == 2 for _ in range(50))
