"""The power planner simulates the study's own plan: the scored scenarios only (a practice task is never
scored), any number of scenarios per system; a between-subjects study is refused with the field named, since
the planner's tests pair each participant's systems."""

import pytest

from scoring.planning.designs import block_size, study_design
from scoring.planning.errors import PlanningError
from studies.design import services
from studies.design.latin_square import assignment_plan

pytestmark = pytest.mark.django_db


def test_a_practice_scenario_is_not_part_of_the_planned_design(designed_study):
    services.scenario_add(study=designed_study, code="WARM", title="w", text="t", topic_id="0", practice=True)
    design, scenario_ids, system_ids = study_design(designed_study, 8)
    scored = list(designed_study.scenarios.filter(practice=False).order_by("id").values_list("pk", flat=True))
    assert scenario_ids == scored and len(system_ids) == 2
    assert design.scenario.shape == (8, 4)
    assert block_size(4, 2) == 8


def test_three_scenarios_on_two_systems_are_planned_as_enrolled(study):
    for n in range(1, 4):
        services.scenario_add(study=study, code=f"S{n}", title="t", text="t", topic_id=str(n))
    services.system_add(study=study, code="A", name="A")
    services.system_add(study=study, code="B", name="B")
    design, _, _ = study_design(study, 12)
    rows = assignment_plan(range(3), range(2), 12)
    assert design.system.tolist() == [[u for _, u in row] for row in rows]
    assert block_size(3, 2) == 12


def test_a_between_subjects_study_is_refused_naming_the_design(designed_study):
    services.study_design_set(study=designed_study, design="between")
    with pytest.raises(PlanningError, match="^design: .*between-subjects"):
        study_design(designed_study, 8)
