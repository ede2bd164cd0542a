"""Enrolment persists each participant's balanced order once, and the design is then fixed."""

from collections import Counter

import pytest

from studies.design import services
from studies.design.selectors import study_balance

pytestmark = pytest.mark.django_db


def pair_counts(study):
    return Counter(
        (a.scenario.code, a.system.code)
        for p in study.participants.all()
        for a in p.assignments.select_related("scenario", "system")
    )


def test_thirty_participants_give_fifteen_sessions_per_scenario_and_system(designed_study):
    services.participants_enrol(study=designed_study, count=30)
    counts = pair_counts(designed_study)
    assert set(counts.values()) == {15}
    assert len(counts) == 8


def test_each_participant_works_every_scenario_once_two_on_each_system(designed_study):
    for participant in services.participants_enrol(study=designed_study, count=8):
        assignments = list(participant.assignments.select_related("scenario", "system"))
        assert [a.position for a in assignments] == [1, 2, 3, 4]
        assert sorted(a.scenario.code for a in assignments) == ["S1", "S2", "S3", "S4"]
        assert Counter(a.system.code for a in assignments) == {"A": 2, "B": 2}


def test_enrolling_in_steps_gives_the_same_orders_as_at_once(designed_study, alice):
    services.participants_enrol(study=designed_study, count=7)
    services.participants_enrol(study=designed_study, count=25)
    stepwise = [
        [(a.scenario.code, a.system.code) for a in p.assignments.all()]
        for p in designed_study.participants.order_by("enrolment_index")
    ]
    other = services.study_create(owner=alice, name="Same design", status="open")
    for n in range(1, 5):
        services.scenario_add(study=other, code=f"S{n}", title="t", text="t", topic_id=str(n))
    services.system_add(study=other, code="A", name="A")
    services.system_add(study=other, code="B", name="B")
    services.participants_enrol(study=other, count=32)
    at_once = [
        [(a.scenario.code, a.system.code) for a in p.assignments.all()]
        for p in other.participants.order_by("enrolment_index")
    ]
    assert stepwise == at_once
    assert [p.code for p in designed_study.participants.order_by("enrolment_index")][:3] == [
        "P001",
        "P002",
        "P003",
    ]


def test_the_balance_table_counts_planned_sessions(designed_study):
    services.participants_enrol(study=designed_study, count=32)
    table = study_balance(study=designed_study)
    assert table.positions == [1, 2, 3, 4]
    assert {cell.planned for _, cells in table.system_rows() for cell in cells} == {16}
    assert {cell.planned for _, cells in table.position_rows() for cell in cells} == {8}
    assert all(cell.completed == 0 for _, cells in table.system_rows() for cell in cells)


def test_the_design_is_fixed_after_the_first_enrolment(designed_study):
    services.participants_enrol(study=designed_study, count=1)
    with pytest.raises(services.DesignLockedError):
        services.scenario_add(study=designed_study, code="S5", title="t", text="t", topic_id="5")
    with pytest.raises(services.DesignLockedError):
        services.system_add(study=designed_study, code="C", name="C")


def test_three_scenarios_on_two_systems_enrol_with_systems_at_most_one_apart(study):
    for n in range(1, 4):
        services.scenario_add(study=study, code=f"S{n}", title="t", text="t", topic_id=str(n))
    services.system_add(study=study, code="A", name="A")
    services.system_add(study=study, code="B", name="B")
    services.participants_enrol(study=study, count=12)  # one block (docs/latin-square.md)
    for participant in study.participants.all():
        assert sorted(Counter(a.system.code for a in participant.assignments.all()).values()) == [1, 2]
    assert set(pair_counts(study).values()) == {6}


def test_it_refuses_to_enrol_before_the_design_exists(study):
    with pytest.raises(ValueError, match="scenarios and systems"):
        services.participants_enrol(study=study, count=1)
