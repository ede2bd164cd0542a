"""THE choice of plan rows for new participants, whichever way they arrive: the researcher's enrolment
(studies/design/services.py: participants_enrol) and the public link (studies/participation/recruitment/
join.py) both call rows_to_issue. It lives here, below both, next to the Latin square it applies
(latin_square.row_to_issue): the attrition-aware square of docs/recruitment.md, freed rows first.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import cast

from django.utils import timezone

from studies.design.latin_square import participant_assignment, row_to_issue
from studies.design.orders import counterbalanced, design_of
from studies.errors import RecruitmentError
from studies.kernel.deadlines import TIME_LIMIT_GRACE, deadline_at
from studies.kernel.states import state_of
from studies.models import FREEING_STATES, Participant, ParticipantState, Recruitment, Study


def plan_row_of(participant: Participant) -> int:
    """The plan row the participant works; a null column reads as their enrolment index."""
    return participant.enrolment_index if participant.plan_row is None else participant.plan_row


def holds_row(participant: Participant, *, now: datetime, limit_minutes: int | None) -> bool:
    """Whether the participant counts for their row: completed, invited (not arrived yet), or started and
    within the cutoff (psiTurk's cutoff_time): the study-level limit, by THE deadline rule (deadline_at)."""
    state = state_of(participant)
    if state in (ParticipantState.COMPLETED, ParticipantState.INVITED):
        return True
    if state in (ParticipantState.STARTED, ParticipantState.ACTIVE):
        deadline = deadline_at(participant.started_at, limit_minutes) if participant.started_at else None
        return deadline is None or now < deadline + TIME_LIMIT_GRACE
    return False


@dataclass
class RowCounts:
    """Per plan row: holders now, completed, active, freed (given up) and re-issued."""

    holders: dict = field(default_factory=lambda: defaultdict(int))
    completed: dict = field(default_factory=lambda: defaultdict(int))
    active: dict = field(default_factory=lambda: defaultdict(int))
    freed: dict = field(default_factory=lambda: defaultdict(int))
    reissued: dict = field(default_factory=lambda: defaultdict(int))
    open_freed: list = field(default_factory=list)  # (row, participant id), oldest first, not re-issued yet
    next_fresh: int = 0


def row_counts(
    *, study: Study, now: datetime | None = None, recruitment: Recruitment | None = None
) -> RowCounts:
    now = now or timezone.now()
    if recruitment is None:
        recruitment = Recruitment.objects.filter(study=study).first()
    minutes = recruitment.time_limit_minutes if recruitment else None
    participants = list(
        Participant.objects.filter(study=study, preview_at__isnull=True).only(
            "pk", "enrolment_index", "plan_row", "reissue_of", "state", "started_at", "state_changed_at"
        )
    )
    taken = {p.reissue_of_id for p in participants if p.reissue_of_id is not None}
    counts = RowCounts()
    freed_rows = []
    for participant in participants:
        row = plan_row_of(participant)
        state = state_of(participant)
        if participant.reissue_of_id is None:
            counts.next_fresh = max(counts.next_fresh, row + 1)
        else:
            counts.reissued[row] += 1
        holds = holds_row(participant, now=now, limit_minutes=minutes)
        if holds:
            counts.holders[row] += 1
        if state == ParticipantState.COMPLETED:
            counts.completed[row] += 1
        elif state in (ParticipantState.STARTED, ParticipantState.ACTIVE) and holds:
            counts.active[row] += 1
        elif state in FREEING_STATES:
            counts.freed[row] += 1
            if participant.pk not in taken:
                freed_rows.append(
                    (participant.state_changed_at or participant.started_at or now, row, participant.pk)
                )
    counts.open_freed = [(row, pk) for _, row, pk in sorted(freed_rows, key=lambda item: (item[0], item[2]))]
    return counts


def closed_rows(recruitment: Recruitment, scenarios, systems, rows: Iterable[int], design: str) -> set[int]:
    """Those of `rows` whose counterbalanced order touches a cell (scenario code, system code) the researcher
    closed (a practice scenario's cell closes nothing: it is not part of the plan). Between-subjects, a closed
    cell closes its system's whole arm, since every row of the arm works every scenario on that system."""
    closed = {
        tuple(cell) for cell in recruitment.closed_cells or [] if isinstance(cell, list) and len(cell) == 2
    }
    if not closed:
        return set()
    return {
        row
        for row in rows
        if any(
            (scenario.code, system.code) in closed
            for scenario, system in participant_assignment(counterbalanced(scenarios), systems, row, design)
        )
    }


def rows_to_issue(
    *,
    study: Study,
    count: int,
    now: datetime | None = None,
    recruitment: Recruitment | None = None,
    scenarios=None,
    systems=None,
) -> list[tuple[int, int | None]]:
    """THE row choice for `count` new participants, whichever way they arrive (the public link, the
    researcher's enrolment): `(plan row, id of the participant whose freed row it is, or None)` for each, in
    turn, each taking row_to_issue's choice after those before it (a freed row is taken once, least held then
    lowest; then the next fresh rows). Rows touching a closed cell are never issued; RecruitmentError when
    every row near the plan's end touches one. The caller holds the study row's lock (SELECT ... FOR UPDATE)
    until its participants are written, so two callers at once never choose the same rows."""
    now = now or timezone.now()
    if recruitment is None:
        recruitment = Recruitment.objects.filter(study=study).first()
    scenarios = list(study.scenarios.order_by("id")) if scenarios is None else scenarios
    systems = list(study.systems.order_by("id")) if systems is None else systems
    counts = row_counts(study=study, now=now, recruitment=recruitment)
    holders, freed, next_fresh = dict(counts.holders), list(counts.open_freed), counts.next_fresh
    window = range(next_fresh, next_fresh + 64 + count)
    closed = (
        closed_rows(
            recruitment, scenarios, systems, {row for row, _ in freed} | set(window), design_of(study)
        )
        if recruitment is not None
        else set()
    )
    chosen = []
    for _ in range(count):
        row, freed_from = row_to_issue(
            holders=holders, freed=freed, next_fresh=next_fresh, closed_rows=closed
        )
        if row in closed or (row not in window and freed_from is None):
            raise RecruitmentError(
                "every row of the plan touches a closed cell: open one to take participants"
            )
        if freed_from is None:
            next_fresh = row + 1
        else:
            freed = [(r, key) for r, key in freed if key != freed_from]
        holders[row] = holders.get(row, 0) + 1  # an invited or arrived participant holds it
        chosen.append((row, cast("int | None", freed_from)))  # the freed keys are participant ids
    return chosen
