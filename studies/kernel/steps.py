"""THE participant's step machine: where a participant is on their way, from their rows alone (reopening the
link resumes at the step's start). The private link's pages, the participant API's way, the form steps'
checks and the simulation all ask it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import cast

from sessionlab import plain_sql
from studies.kernel.gold import GoldPair, gold_pending
from studies.models import Assignment, Participant, Scenario, SearchSession, System
from studies.questionnaires.items import usable_items


class StepKind(StrEnum):
    """The kinds of a participant's step, in the order the participant API's schema lists them.
    `participant_step` gives all but three: CHECKS, ENDED and PAUSED are the way's (where a participant is:
    the study's checks before the first task, a participant whose state ended, a study that takes no new
    step now)."""

    CONSENT = "consent"
    DECLINED = "declined"
    WITHDRAWN = "withdrawn"
    QUESTIONNAIRE = "questionnaire"
    CHECKS = "checks"
    PRE_TASK = "pre_task"
    SCENARIO = "scenario"
    SEARCH = "search"
    GOLD = "gold"
    POST_TASK = "post_task"
    DONE = "done"
    NO_ASSIGNMENTS = "no_assignments"
    ENDED = "ended"
    PAUSED = "paused"


@dataclass
class ParticipantStep:
    """Where a participant is: kind is consent | declined | withdrawn | questionnaire | scenario (read it and
    start) | pre_task (the study's questions before each task) | search | gold (the scenario's two gold
    documents, studies/kernel/gold.py) | post_task | done | no_assignments (StepKind); `assignment` and
    `session` for the per-scenario steps, `gold` the pair for the gold step."""

    kind: StepKind
    assignment: Assignment | None = None
    session: SearchSession | None = None
    position: int = 0  # 1-based index of the assignment in the order
    total: int = 0
    gold: GoldPair | None = None
    # What the participant reads ("Search task 2 of 4"): practice tasks left out of both, as they come first
    # and are never scored (a practice task's pages say "Practice task" instead).
    task_number: int = 0
    task_total: int = 0


def participant_assignments(*, participant: Participant) -> list[Assignment]:
    """The participant's assignments in order, each with its scenario, system and session (or none yet): what
    participant.assignments.select_related("scenario", "system", "session") gives, in plain SQL, as it runs
    for every page a participant opens."""
    found = plain_sql.rows(
        f"SELECT {plain_sql.select_list(Assignment, 'a')}, {plain_sql.select_list(Scenario, 'c')},"
        f" {plain_sql.select_list(System, 'y')}, {plain_sql.select_list(SearchSession, 's')}"
        f" FROM {plain_sql.table(Assignment)} a JOIN {plain_sql.table(Scenario)} c ON c.id = a.scenario_id"
        f" JOIN {plain_sql.table(System)} y ON y.id = a.system_id"
        f" LEFT JOIN {plain_sql.table(SearchSession)} s ON s.assignment_id = a.id"
        " WHERE a.participant_id = %s ORDER BY a.position",
        [participant.pk],
    )
    assignments: list[Assignment] = []
    for row in found:
        parts = plain_sql.instances(row, Assignment, Scenario, System, SearchSession)
        assignment, scenario, system = (  # inner joins: always there
            cast(Assignment, parts[0]),
            cast(Scenario, parts[1]),
            cast(System, parts[2]),
        )
        session = cast(SearchSession | None, parts[3])  # the left join: None when no session yet
        assignment.participant = participant
        assignment.scenario, assignment.system = scenario, system
        for part in (scenario, system):
            if part.study_id == participant.study_id and plain_sql.is_loaded(participant, "study"):
                part.study = participant.study
        plain_sql.cache_reverse_one(assignment, "session", session)  # None: no session yet
        if session is not None:
            session.assignment = assignment
        assignments.append(assignment)
    return assignments


def participant_step(*, participant: Participant) -> ParticipantStep:
    """The participant's current step, from their rows (reopening the link resumes at its start)."""
    if participant.withdrawn_at is not None:
        return ParticipantStep(StepKind.WITHDRAWN)
    if participant.declined_at is not None:
        return ParticipantStep(StepKind.DECLINED)
    if participant.consented_at is None:
        return ParticipantStep(StepKind.CONSENT)
    if not participant.questionnaire_answers:
        return ParticipantStep(StepKind.QUESTIONNAIRE)
    assignments = participant_assignments(participant=participant)
    if not assignments:
        return ParticipantStep(StepKind.NO_ASSIGNMENTS)
    task_total = sum(not a.scenario.practice for a in assignments)
    for number, assignment in enumerate(assignments, start=1):
        task = sum(not a.scenario.practice for a in assignments[:number])
        session = getattr(assignment, "session", None)
        step: StepKind | None = None
        if session is None:
            # The questions before each task come before the scenario's start (none when the study has none).
            asks_pre_task = bool(usable_items(participant.study.pre_task_questionnaire))
            step = (
                StepKind.PRE_TASK if asks_pre_task and not assignment.pre_task_answers else StepKind.SCENARIO
            )
        elif session.ended_at is None:
            step = StepKind.SEARCH
        elif not session.post_task_answers and session.end_reason != SearchSession.EndReason.WITHDRAWN:
            # The scenario's gold documents, when the study has them, come between the search and its
            # questions.
            pair = gold_pending(participant=participant, session=session, scenario=assignment.scenario)
            if pair is not None:
                return ParticipantStep(
                    StepKind.GOLD, assignment, session, number, len(assignments), pair, task, task_total
                )
            step = StepKind.POST_TASK
        if step:
            return ParticipantStep(
                step, assignment, session, number, len(assignments), None, task, task_total
            )
    return ParticipantStep(
        StepKind.DONE,
        total=len(assignments),
        position=len(assignments),
        task_number=task_total,
        task_total=task_total,
    )
