"""Reads for pages and the API: a few queries each, never one per row."""

from __future__ import annotations

import hmac
from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Prefetch

from . import plain_sql
from .models import Assignment, Participant, SearchSession, Study, access_token_digest


@dataclass
class Cell:
    planned: int = 0
    completed: int = 0
    in_progress: int = 0


@dataclass
class BalanceTable:
    """Counts of assignments by scenario x system and scenario x position."""

    scenarios: list
    systems: list
    positions: list[int]
    by_system: dict = field(default_factory=lambda: defaultdict(Cell))  # (scenario_id, system_id) -> Cell
    by_position: dict = field(default_factory=lambda: defaultdict(Cell))  # (scenario_id, position) -> Cell

    def system_rows(self):
        return [(s, [self.by_system[(s.id, y.id)] for y in self.systems]) for s in self.scenarios]

    def position_rows(self):
        return [(s, [self.by_position[(s.id, p)] for p in self.positions]) for s in self.scenarios]


_FINISHED = [
    SearchSession.EndReason.SATISFIED,
    SearchSession.EndReason.GAVE_UP,
    SearchSession.EndReason.TIMED_OUT,
]


def study_balance(*, study: Study) -> BalanceTable:
    scenarios = list(study.scenarios.order_by("id"))
    systems = list(study.systems.order_by("id"))
    rows = Assignment.objects.filter(participant__study=study, retake_of__isnull=True).values_list(
        "scenario_id", "system_id", "position", "session__ended_at", "session__end_reason", "session__id"
    )
    table = BalanceTable(scenarios=scenarios, systems=systems, positions=[])
    positions = set()
    for scenario_id, system_id, position, ended_at, end_reason, session_id in rows:
        positions.add(position)
        for cell in (table.by_system[(scenario_id, system_id)], table.by_position[(scenario_id, position)]):
            cell.planned += 1
            if ended_at is not None and end_reason in _FINISHED:
                cell.completed += 1
            elif session_id is not None and ended_at is None:
                cell.in_progress += 1
    table.positions = sorted(positions) or list(range(1, len(scenarios) + 1))
    return table


def study_participants_with_orders(*, study: Study):
    """Participants with their assignments (scenario, system, session) in two queries."""
    assignments = Assignment.objects.select_related("scenario", "system", "session").order_by("position")
    return study.participants.order_by("enrolment_index").prefetch_related(
        Prefetch("assignments", queryset=assignments)
    )


def studies_visible_to(user):
    """Studies a researcher may see: those they own or were added to; everything for superusers."""
    if user.is_superuser:
        return Study.objects.all()
    return Study.objects.filter(researchers=user).distinct()


def participant_by_token(token: str) -> Participant | None:
    """The participant whose private-link token this is, or None. Looked up by the token's SHA-256 digest (an
    indexed column), then the token itself is compared in constant time: how long a wrong guess takes says
    nothing about how close it was (docs/security.md)."""
    return _checked(token, Participant.objects.select_related("study"))


# What the events endpoint reads of a participant and their study (studies/ingest.py), in one plain statement: it
# runs for every batch a page sends (studies/plain_sql.py says why). Any other field still loads when touched.
_EVENT_PARTICIPANT = ("id", "study_id", "access_token", "consented_at", "declined_at", "withdrawn_at")
_EVENT_STUDY = ("id", "collection_id", "time_limit_minutes")


def participant_for_events(token: str) -> Participant | None:
    """participant_by_token, for the events endpoint."""
    if not _plausible(token):
        return None
    found = plain_sql.rows(
        f"SELECT {', '.join('p.' + name for name in _EVENT_PARTICIPANT)},"
        f" {', '.join('s.' + name for name in _EVENT_STUDY)} FROM {plain_sql.table(Participant)} p"
        f" JOIN {plain_sql.table(Study)} s ON s.id = p.study_id WHERE p.access_token_digest = %s",
        [access_token_digest(token)])
    if not found or not hmac.compare_digest(found[0][2].encode(), token.encode()):
        return None
    values = dict(zip(_EVENT_PARTICIPANT, found[0], strict=False))
    for name in ("consented_at", "declined_at", "withdrawn_at"):
        values[name] = plain_sql.aware(values[name])
    participant = _from_db(Participant, values)
    participant.study = _from_db(Study, dict(zip(_EVENT_STUDY, found[0][len(_EVENT_PARTICIPANT):], strict=True)))
    return participant


def _from_db(model, values: dict):
    """An instance with only these fields loaded, as .only() would build it."""
    return model.from_db("default", list(values), [values[f.attname] for f in model._meta.concrete_fields
                                                   if f.attname in values])


def _plausible(token) -> bool:
    return isinstance(token, str) and bool(token) and len(token) <= 128 and token.isascii()  # real ones: 43 chars


def _checked(token: str, participants) -> Participant | None:
    if not _plausible(token):
        return None
    participant = next(iter(participants.filter(access_token_digest=access_token_digest(token))[:1]), None)
    if participant is None or not hmac.compare_digest(participant.access_token.encode(), token.encode()):
        return None
    return participant


@dataclass
class ParticipantStep:
    """Where a participant is: kind is consent | declined | withdrawn | questionnaire | scenario (read it and
    start) | search | post_task | done | no_assignments; `assignment` and `session` for the per-scenario steps."""

    kind: str
    assignment: Assignment | None = None
    session: SearchSession | None = None
    position: int = 0  # 1-based index of the assignment in the order
    total: int = 0


def participant_step(*, participant: Participant) -> ParticipantStep:
    """The participant's current step, from their rows (reopening the link resumes at its start)."""
    if participant.withdrawn_at is not None:
        return ParticipantStep("withdrawn")
    if participant.declined_at is not None:
        return ParticipantStep("declined")
    if participant.consented_at is None:
        return ParticipantStep("consent")
    if not participant.questionnaire_answers:
        return ParticipantStep("questionnaire")
    assignments = list(
        participant.assignments.select_related("scenario", "system", "session").order_by("position")
    )
    if not assignments:
        return ParticipantStep("no_assignments")
    for number, assignment in enumerate(assignments, start=1):
        session = getattr(assignment, "session", None)
        step = None
        if session is None:
            step = "scenario"
        elif session.ended_at is None:
            step = "search"
        elif not session.post_task_answers and session.end_reason != SearchSession.EndReason.WITHDRAWN:
            step = "post_task"
        if step:
            return ParticipantStep(step, assignment, session, number, len(assignments))
    return ParticipantStep("done", total=len(assignments), position=len(assignments))
