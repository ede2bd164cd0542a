"""The study's design as the power simulation sees it: its Latin-square rows over the scored scenarios."""

from __future__ import annotations

from functools import lru_cache

from studies.design.latin_square import BETWEEN, assignment_block_size, assignment_plan
from studies.models import Study

from ..lib.power import Design
from .errors import PlanningError


@lru_cache(maxsize=32)
def _design_rows(n_scenarios: int, n_systems: int, n: int) -> Design:
    return Design.from_rows(assignment_plan(list(range(n_scenarios)), list(range(n_systems)), n))


def study_design(study: Study, n: int) -> tuple[Design, list[int], list[int]]:
    """The study's Latin-square rows for its first n participants, as indices into (scenario ids, system ids)
    in id order, the order enrolment uses (studies.design.services.participants_enrol). Practice scenarios
    are never scored, so they are not part of it. The power simulation pairs each participant's systems: a
    between-subjects design is refused (its unpaired test is not simulated)."""
    scenario_ids = list(study.scenarios.filter(practice=False).order_by("id").values_list("pk", flat=True))
    system_ids = list(study.systems.order_by("id").values_list("pk", flat=True))
    if len(system_ids) < 2:
        raise PlanningError("systems: the study needs at least two systems to compare")
    if not scenario_ids:
        raise PlanningError("design: the study has no scored (non-practice) scenario")
    if study.design == BETWEEN:
        raise PlanningError(
            "design: power planning simulates paired (within-subject) comparisons; "
            "this study is between-subjects"
        )
    return _design_rows(len(scenario_ids), len(system_ids), n), scenario_ids, system_ids


def block_size(n_scenarios: int, n_systems: int) -> int:
    """Participants in one exactly balanced block of the design (studies' Latin square: 4 x 2 gives 8)."""
    if not n_systems or not n_scenarios:
        return 2
    return assignment_block_size(n_scenarios, n_systems)
