"""Enrolment builds each participant's order from the study's design: between-subjects, one system for all
their tasks, arms equal and order counterbalanced within each arm; within-subject, any number of scenarios
per system; practice scenarios first. The design is fixed with the scenarios and systems at the first
enrolment."""

from collections import Counter

import pytest

from studies.design import services
from studies.design.selectors import study_balance

pytestmark = pytest.mark.django_db


def orders(study):
    return [
        [(a.scenario.code, a.system.code) for a in p.assignments.order_by("position")]
        for p in study.participants.order_by("enrolment_index")
    ]


def test_between_subjects_participants_use_one_system_in_equal_arms(designed_study):
    services.study_design_set(study=designed_study, design="between")
    services.participants_enrol(study=designed_study, count=16)  # two blocks of 8
    found = orders(designed_study)
    arms = Counter()
    within_arm = Counter()
    for order in found:
        [system] = {u for _, u in order}
        arms[system] += 1
        assert sorted(s for s, _ in order) == ["S1", "S2", "S3", "S4"]
        within_arm.update((system, s, j) for j, (s, _) in enumerate(order))
    assert arms == {"A": 8, "B": 8}
    assert set(within_arm.values()) == {2}  # each scenario twice at each position in each arm
    table = study_balance(study=designed_study)
    assert {i.key: i.issued for i in table.imbalance} == {
        "scenario_system": 0,
        "scenario_position": 0,
        "system_position": 0,
        "arm_scenario_position": 0,
    }


def test_an_odd_number_of_between_subjects_participants_differs_by_one_at_most(designed_study):
    services.study_design_set(study=designed_study, design="between")
    services.participants_enrol(study=designed_study, count=5)
    assert Counter(order[0][1] for order in orders(designed_study)) == {"A": 3, "B": 2}


def test_three_scenarios_on_two_systems_are_balanced_and_the_page_says_so(client, study):
    for n in range(1, 4):
        services.scenario_add(study=study, code=f"S{n}", title="t", text="t", topic_id=str(n))
    services.system_add(study=study, code="A", name="A")
    services.system_add(study=study, code="B", name="B")
    services.participants_enrol(study=study, count=13)  # one block of 12, and one more
    for order in orders(study):
        assert sorted(Counter(u for _, u in order).values()) == [1, 2]
    table = study_balance(study=study)
    assert table.system_spread == 1
    worst = {i.key: i.issued for i in table.imbalance}
    assert worst["scenario_system"] <= 1 and worst["scenario_position"] <= 1
    client.force_login(study.owner)
    page = client.get(f"/studies/{study.slug}/").content.decode()
    assert 'id="balance-imbalance"' in page
    assert (
        "each system for 1 or 2 of them (at most one apart). Every 12 participants are exactly balanced"
        in page
    )
    assert "two systems' task counts differ by at most 1" in page


def test_practice_scenarios_come_first_and_stay_out_of_the_balance(client, designed_study):
    services.scenario_add(
        study=designed_study, code="WARM", title="Warm-up", text="t", topic_id="0", practice=True
    )
    services.study_design_set(study=designed_study, design="between")
    services.participants_enrol(study=designed_study, count=8)
    client.force_login(designed_study.owner)
    page = client.get(f"/studies/{designed_study.slug}/").content.decode()
    assert "Practice first: WARM (not scored). Between-subjects" in page
    assert 'data-key="arm_scenario_position"' in page
    for order in orders(designed_study):
        assert order[0] == ("WARM", order[1][1])
        assert sorted(s for s, _ in order[1:]) == ["S1", "S2", "S3", "S4"]
        assert len({u for _, u in order}) == 1  # between-subjects: the practice on the arm's system too
    table = study_balance(study=designed_study)
    assert [s.code for s in table.scenarios] == ["S1", "S2", "S3", "S4"]
    assert table.positions == [2, 3, 4, 5]
    assert {i.issued for i in table.imbalance} == {0}  # one complete block of the four scenarios


def test_the_design_is_fixed_after_the_first_enrolment(designed_study):
    services.study_design_set(study=designed_study, design="between")
    services.participants_enrol(study=designed_study, count=1)
    with pytest.raises(services.DesignLockedError):
        services.study_design_set(study=designed_study, design="within")
    designed_study.refresh_from_db()
    assert designed_study.design == "between"
    scenario = designed_study.scenarios.first()
    with pytest.raises(services.DesignLockedError):
        services.design_row_update(study=designed_study, row=scenario, practice=True)


def test_an_unknown_design_is_refused_and_changes_nothing(designed_study):
    with pytest.raises(services.DesignError, match="design: 'crossover' is not one of within, between"):
        services.study_design_set(study=designed_study, design="crossover")
    designed_study.refresh_from_db()
    assert designed_study.design is None
