"""Each strategy of the simulated searchers (studies/simulation/searchers.py) on its own: query generation,
the stopping rules, the judging noise calibrated to a
target agreement, and the refusals naming the parameter."""

import random

import pytest

from studies.simulation import searchers
from studies.simulation.searchers import Costs, Strategy, StrategyError


def test_scenario_terms_are_ranked_by_frequency_with_the_title_counted_twice():
    terms = searchers.ranked_terms(
        "Flow over a heated plate; the plate's boundary layer and its heat flow.", title="Boundary layer"
    )
    # boundary and layer: 1 in the text + 2 for the title; flow and plate: 2; heated, heat: 1
    assert terms[:4] == ["boundary", "layer", "flow", "plate"]
    assert "the" not in terms and "over" not in terms


def test_document_terms_rank_by_how_many_relevant_documents_use_them():
    texts = ["shock wave wing shock", "shock tunnel wing", "shock nozzle"]
    assert searchers.document_terms(texts, exclude=["wing"]) == ["shock", "nozzle", "tunnel", "wave"]


def test_pivot_queries_keep_the_top_terms_and_append_each_next_one():
    queries = searchers.pivot_queries(["a1", "b2", "c3", "d4", "e5"], 3, 5)
    assert queries == [["a1", "b2", "c3"], ["a1", "b2", "d4"], ["a1", "b2", "e5"], ["a1", "b2"], ["a1", "c3"]]
    assert len({tuple(q) for q in queries}) == 5  # no query repeated while new ones exist
    assert searchers.pivot_queries([], 3, 2) == [["search"], ["search"]]


@pytest.mark.parametrize(
    ("strategy", "seen", "stops"),
    [
        (Strategy(stopping="fixed", depth=3), (2, 0, 2), False),
        (Strategy(stopping="fixed", depth=3), (3, 0, 3), True),
        (Strategy(stopping="patience"), (4, 0, 4), True),  # the drawn depth (4 below)
        (Strategy(stopping="patience"), (3, 0, 3), False),
        (Strategy(stopping="satisfaction", satisfied_after=2), (5, 1, 4), False),
        (Strategy(stopping="satisfaction", satisfied_after=2), (5, 2, 3), True),
        (Strategy(stopping="frustration", frustrated_after=3), (3, 1, 2), False),
        (Strategy(stopping="frustration", frustrated_after=3), (4, 1, 3), True),
        (Strategy(stopping="combined", satisfied_after=1, frustrated_after=9), (2, 1, 1), True),
        (Strategy(stopping="combined", satisfied_after=5, frustrated_after=2), (2, 0, 2), True),
        (
            Strategy(stopping="satisfaction", satisfied_after=9, depth=6),
            (6, 0, 6),
            True,
        ),  # depth caps every rule
    ],
)
def test_each_stopping_rule_leaves_the_list_when_it_says(strategy, seen, stops):
    examined, relevant, not_relevant = seen
    assert (
        searchers.stop_examining(
            strategy, examined=examined, relevant=relevant, not_relevant=not_relevant, drawn_depth=4
        )
        is stops
    )


@pytest.mark.parametrize("target", [0.95, 0.8, 0.65])
def test_judging_noise_is_calibrated_to_the_target_agreement(target):
    rng = random.Random(4)
    grades = [rng.choice((0, 0, 0, 1, 2, 3)) for _ in range(400)]
    rate = searchers.misjudge_rate(target, grades, 3)
    judged = [searchers.perceived(rng, grade, rate, 3) for _ in range(50) for grade in grades]
    agreement = sum(j == g for j, g in zip(judged, grades * 50, strict=True)) / len(judged)
    assert agreement == pytest.approx(target, abs=0.01)


def test_a_slip_at_either_end_of_the_scale_changes_half_the_time():
    assert searchers.change_share([0, 3], 3) == 0.5
    assert searchers.change_share([1, 2], 3) == 1.0
    with pytest.raises(StrategyError, match="agreement: 0.3 is below"):
        searchers.misjudge_rate(0.3, [0, 0, 3], 3)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"queries": "random"}, "queries: 'random' is not one of scenario, terms, relevant"),
        ({"stopping": "bored"}, "stopping: 'bored' is not one of"),
        ({"depth": 0}, "depth: at least 1"),
        ({"time_limit": -5}, "time_limit: seconds > 0"),
        ({"agreement": 1.5}, "agreement: a share in (0, 1]"),
        ({"costs": {"query": -1}}, "costs.query: seconds must be >= 0"),
        ({"costs": {"typing": 3}}, "costs: a mapping of query, snippet, document, judgment"),
        ({"patience": 3}, "unknown strategy parameter(s): patience"),
    ],
)
def test_a_bad_strategy_parameter_is_refused_by_name(options, message):
    with pytest.raises(StrategyError) as refused:
        Strategy.from_dict(options)
    assert message in str(refused.value)


def test_a_strategy_round_trips_through_a_dict():
    strategy = Strategy(queries="terms", stopping="combined", time_limit=300, costs=Costs(query=5))
    from dataclasses import asdict

    assert Strategy.from_dict(asdict(strategy)) == strategy
