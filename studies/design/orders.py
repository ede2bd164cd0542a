"""THE order a participant works, built from the study's design, whichever way they arrive (the researcher's
enrolment, the public link, the preview): the practice scenarios first, then their row of the balanced plan
(studies/design/latin_square.py) over the other scenarios. docs/latin-square.md."""

from __future__ import annotations

from collections.abc import Sequence

from sessionlab import plurals
from studies.design.latin_square import BETWEEN, WITHIN, assignment_block_size, participant_assignment
from studies.models import Scenario, Study, System


def design_of(study: Study) -> str:
    """The study's design; a null column reads as within-subject (every study before designs existed)."""
    return BETWEEN if study.design == BETWEEN else WITHIN


def counterbalanced(scenarios: Sequence[Scenario]) -> list[Scenario]:
    """The scenarios the plan balances: all but the practice ones, in the order given (id order)."""
    return [scenario for scenario in scenarios if not scenario.practice]


def design_problem(scenarios: Sequence[Scenario], systems: Sequence[System]) -> str:
    """What stops the study's orders from being built, or "" (any numbers of scenarios and systems work)."""
    if not scenarios or not systems:
        return "add the study's scenarios and systems first"
    if not counterbalanced(scenarios):
        return "every scenario is marked practice: at least one scenario must be a scored task"
    return ""


def participant_order(
    *, study: Study, scenarios: Sequence[Scenario], systems: Sequence[System], row: int
) -> list[tuple[Scenario, System]]:
    """The (scenario, system) pairs of plan row `row`, in working order: the practice scenarios first (id
    order) on the system the participant starts with (between-subjects: their arm's), then the row of the
    balanced plan over the other scenarios. `scenarios` and `systems` in id order, as every caller reads them;
    design_problem must be empty."""
    plan = participant_assignment(counterbalanced(scenarios), systems, row, design_of(study))
    first_system = plan[0][1]
    practice = [(scenario, first_system) for scenario in scenarios if scenario.practice]
    return practice + plan


def design_summary(*, study: Study, scenarios: Sequence[Scenario], systems: Sequence[System]) -> str:
    """One sentence on what the design gives each participant and when it is exactly balanced, for the
    set-up checklist and the balance table."""
    design = design_of(study)
    counted = counterbalanced(scenarios)
    practice = len(scenarios) - len(counted)
    first = "Practice first: " + ", ".join(s.code for s in scenarios if s.practice) + " (not scored). "
    lead = first if practice else ""
    if not counted or not systems:
        name = "Between-subjects" if design == BETWEEN else "Within-subject"
        return f"{lead}{name}; add scenarios and systems to see the plan."
    k, m = len(counted), len(systems)
    block = assignment_block_size(k, m, design)
    balanced = (
        "Every participant is exactly balanced."
        if block == 1
        else f"Every {block} participants are exactly balanced."
    )
    if design == BETWEEN:
        arms = "the one arm takes" if m == 1 else f"the {m} arms take"
        return (
            f"{lead}Between-subjects: each participant works the {plurals.counted(k, 'scenario')} on one "
            f"system; {arms} participants in turn. {balanced}"
        )
    low, high = k // m, -(-k // m)
    split = (
        f"each system for {low} of them"
        if low == high
        else f"each system for {low} or {high} of them (at most one apart)"
    )
    works = plurals.counted(k, "scenario")
    return f"{lead}Within-subject: each participant works the {works}, {split}. {balanced}"


# Rows shown on the design page: one complete block, at most this many.
PREVIEW_ROWS = 24


def design_preview(
    *, study: Study, scenarios: Sequence[Scenario], systems: Sequence[System]
) -> list[list[tuple[Scenario, System]]]:
    """The orders of the plan's first rows (one block, at most PREVIEW_ROWS), for the design page; empty
    when design_problem says the orders cannot be built yet."""
    if design_problem(scenarios, systems):
        return []
    block = assignment_block_size(len(counterbalanced(scenarios)), len(systems), design_of(study))
    return [
        participant_order(study=study, scenarios=scenarios, systems=systems, row=row)
        for row in range(min(block, PREVIEW_ROWS))
    ]
