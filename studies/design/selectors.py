"""Reads for pages and the API: a few queries each, never one per row."""

from __future__ import annotations

import hmac
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db.models import Case, DateTimeField, F, Prefetch, Q, Value, When

from sessionlab import plain_sql
from studies.models import (
    Assignment,
    Collection,
    GradeLevel,
    Participant,
    Scenario,
    SearchSession,
    Study,
    System,
    access_token_digest,
)


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


def collections_visible_to(user):
    """Collections a researcher may see and build studies on: their own, those shared with them, and those of
    the studies they research on (whose documents they read already); every collection for superusers (a
    collection without an owner is theirs alone)."""
    if user.is_superuser:
        return Collection.objects.all()
    if not user.is_authenticated:
        return Collection.objects.none()
    shared = Collection.shared_with.through.objects.filter(user_id=user.pk).values("collection_id")
    studied = Study.objects.filter(researchers=user, collection__isnull=False).values("collection_id")
    return Collection.objects.filter(Q(owner_id=user.pk) | Q(pk__in=shared) | Q(pk__in=studied))


def collection_usable_by(*, user, collection: Collection) -> bool:
    return user is not None and collections_visible_to(user).filter(pk=collection.pk).exists()


def participant_by_token(token: str) -> Participant | None:
    """The participant whose private-link token this is (with their study), or None. Looked up by the token's
    SHA-256 digest (an indexed column), then the token itself is compared in constant time: how long a wrong
    guess takes says nothing about how close it was (docs/security.md). Plain SQL: every page and event batch
    of a participant starts here (sessionlab/plain_sql.py says why)."""
    if not _plausible(token):
        return None
    found = plain_sql.rows(
        f"SELECT {plain_sql.select_list(Participant, 'p')}, {plain_sql.select_list(Study, 's')}"
        f" FROM {plain_sql.table(Participant)} p JOIN {plain_sql.table(Study)} s ON s.id = p.study_id"
        " WHERE p.access_token_digest = %s", [access_token_digest(token)])
    if not found:
        return None
    participant, study = plain_sql.instances(found[0], Participant, Study)
    if not hmac.compare_digest(participant.access_token.encode(), token.encode()):
        return None
    participant.study = study
    return participant


participant_for_events = participant_by_token  # the events endpoint's name for it


def _plausible(token) -> bool:
    return isinstance(token, str) and bool(token) and len(token) <= 128 and token.isascii()  # real ones: 43 chars


@dataclass
class ParticipantStep:
    """Where a participant is: kind is consent | declined | withdrawn | questionnaire | scenario (read it and
    start) | search | post_task | done | no_assignments; `assignment` and `session` for the per-scenario steps."""

    kind: str
    assignment: Assignment | None = None
    session: SearchSession | None = None
    position: int = 0  # 1-based index of the assignment in the order
    total: int = 0


def participant_assignments(*, participant: Participant) -> list[Assignment]:
    """The participant's assignments in order, each with its scenario, system and session (or none yet): what
    participant.assignments.select_related("scenario", "system", "session") gives, in plain SQL, as it runs for
    every page a participant opens."""
    found = plain_sql.rows(
        f"SELECT {plain_sql.select_list(Assignment, 'a')}, {plain_sql.select_list(Scenario, 'c')},"
        f" {plain_sql.select_list(System, 'y')}, {plain_sql.select_list(SearchSession, 's')}"
        f" FROM {plain_sql.table(Assignment)} a JOIN {plain_sql.table(Scenario)} c ON c.id = a.scenario_id"
        f" JOIN {plain_sql.table(System)} y ON y.id = a.system_id"
        f" LEFT JOIN {plain_sql.table(SearchSession)} s ON s.assignment_id = a.id"
        " WHERE a.participant_id = %s ORDER BY a.position", [participant.pk])
    assignments = []
    for row in found:
        assignment, scenario, system, session = plain_sql.instances(row, Assignment, Scenario, System, SearchSession)
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


def grade_levels(*, study: Study) -> list[GradeLevel]:
    """The study's relevance scale, lowest first (plain SQL: the search page shows it every time it opens)."""
    return [plain_sql.instance(GradeLevel, row) for row in plain_sql.rows(
        f"SELECT {plain_sql.select_list(GradeLevel, 'g')} FROM {plain_sql.table(GradeLevel)} g"
        " WHERE g.study_id = %s ORDER BY g.value", [study.pk])]


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
    assignments = participant_assignments(participant=participant)
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


# --- the event log --------------------------------------------------------------------------------------

# What Python's datetime can hold. PostgreSQL stores times beyond it (a client's `0001-01-01T00:00:00+14:00` is
# 0000-12-31 in UTC, 1 BC), and reading such a row would fail the page or the export holding it; the events
# endpoints no longer store one (studies/participation/event_checks.py), rows stored before read as null.
_READABLE_TIMES = (datetime(1, 1, 2, tzinfo=UTC), datetime(9999, 12, 30, tzinfo=UTC))


def events_readable(queryset):
    """Events with `readable_client_time` (the client time, or None where Python cannot hold it) and the
    column itself deferred: the serializers and exports read that instead."""
    return queryset.defer("client_time").annotate(readable_client_time=Case(
        When(client_time__range=_READABLE_TIMES, then=F("client_time")), default=Value(None),
        output_field=DateTimeField()))


def events_read(queryset):
    """The events of `queryset` (events_readable), each with `client_time` set from the readable one."""
    for event in events_readable(queryset):
        event.client_time = event.readable_client_time
        yield event
