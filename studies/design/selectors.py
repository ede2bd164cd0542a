"""Reads for pages and the API: a few queries each, never one per row."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction
from typing import cast

from django.db.models import (
    Count,
    F,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce

from sessionlab import plain_sql
from studies.accounts.access import studies_visible_to
from studies.design.latin_square import BETWEEN, WITHIN, balance_report, participant_system_spread
from studies.design.lifecycle import OPEN
from studies.design.orders import counterbalanced, design_of, design_summary
from studies.models import (
    FREEING_STATES,
    Assignment,
    Collection,
    GradeLevel,
    Participant,
    SearchSession,
    Study,
    System,
)


@dataclass
class Cell:
    """One cell of the balance table. planned: assignments of the plan's rows as first issued; completed:
    finished sessions of participants who hold their row; in_progress (shown as active): sessions open now;
    freed: assignments of participants whose ending freed their row (returned, timed out, screened out,
    withdrawn); reissued: assignments of participants who received a freed row."""

    planned: int = 0
    completed: int = 0
    in_progress: int = 0
    freed: int = 0
    reissued: int = 0

    @property
    def active(self) -> int:
        return self.in_progress


@dataclass
class SystemAttrition:
    system: System
    started: int = 0  # sessions started on this system
    dropped: int = 0  # participants whose row was freed while on this system (the session they left)

    @property
    def rate(self) -> float | None:
        return self.dropped / self.started if self.started else None


@dataclass
class BalanceTable:
    """Counts of assignments by scenario x system and scenario x position, and attrition per system."""

    scenarios: list
    systems: list
    positions: list[int]
    by_system: dict = field(default_factory=lambda: defaultdict(Cell))  # (scenario_id, system_id) -> Cell
    by_position: dict = field(default_factory=lambda: defaultdict(Cell))  # (scenario_id, position) -> Cell
    attrition: list = field(default_factory=list)  # SystemAttrition per system
    attrition_warning: str = ""
    design: str = WITHIN
    summary: str = ""  # what the design gives each participant (orders.design_summary)
    imbalance: list = field(default_factory=list)  # Imbalance per table
    issued: int = 0  # participants whose rows were issued fresh (the plan's prefix)
    held: int = 0  # participants holding their row now (not freed)
    system_spread: int | None = (
        None  # largest gap between two systems' task counts in one participant's order
    )

    def system_rows(self):
        return [(s, [self.by_system[(s.id, y.id)] for y in self.systems]) for s in self.scenarios]

    def position_rows(self):
        return [(s, [self.by_position[(s.id, p)] for p in self.positions]) for s in self.scenarios]


@dataclass
class Imbalance:
    """One table's largest |count - equal share| (latin_square.balance_report): over the rows as first
    issued (a prefix of the plan, what its bounds speak of) and over the rows held now (completed, active or
    invited: after attrition and re-issue)."""

    key: str
    label: str
    issued: Fraction | None
    held: Fraction | None


IMBALANCE_LABELS = {
    "scenario_system": "Scenario × system",
    "scenario_position": "Scenario × position",
    "system_position": "System × position",
    "arm_scenario_position": "Scenario × position within each arm",
}


_FINISHED = [
    SearchSession.EndReason.SATISFIED,
    SearchSession.EndReason.GAVE_UP,
    SearchSession.EndReason.TIMED_OUT,
]
# How a session ends when its participant left during it (timed out, withdrew, left on the panel).
_LEFT_DURING = (
    SearchSession.EndReason.TIMED_OUT,
    SearchSession.EndReason.WITHDRAWN,
    SearchSession.EndReason.LEFT,
)
# Attrition that differs between systems by more than this (with enough dropouts to tell) is worth a warning:
# re-issuing the freed rows rebalances the cells and hides it (a possible bias).
ATTRITION_GAP = 0.10
ATTRITION_MIN_DROPPED = 5


# What the balance table reads of each counterbalanced assignment, in the order study_balance unpacks it.
_BALANCE_COLUMNS = (
    "scenario_id",
    "system_id",
    "position",
    "session__ended_at",
    "session__end_reason",
    "session__id",
    "participant_id",
    "participant__state",
    "participant__reissue_of_id",
    "participant__withdrawn_at",
    "participant__declined_at",
)


def study_balance(*, study: Study) -> BalanceTable:
    """The balance table of the study page: the counterbalanced scenarios (a practice scenario is not part
    of the plan) by system and by position, attrition per system, and the imbalance of the plan's rows."""
    everything = list(study.scenarios.order_by("id"))
    scenarios = counterbalanced(everything)
    systems = list(study.systems.order_by("id"))
    rows = (
        Assignment.objects.filter(
            participant__study=study,
            retake_of__isnull=True,
            participant__preview_at__isnull=True,
            scenario__practice=False,
        )
        .values_list(*_BALANCE_COLUMNS)
        .order_by("participant_id", "position")
    )
    table = BalanceTable(
        scenarios=scenarios,
        systems=systems,
        positions=[],
        design=design_of(study),
        summary=design_summary(study=study, scenarios=everything, systems=systems),
    )
    orders: dict[int, list[tuple[int, int]]] = defaultdict(list)  # participant -> (scenario, system) ids
    fresh, kept = set(), set()
    positions = set()
    attrition = {system.id: SystemAttrition(system) for system in systems}
    left_on = {}  # participant id -> the system of the session they left (their first one not finished)
    for (
        scenario_id,
        system_id,
        position,
        ended_at,
        end_reason,
        session_id,
        participant_id,
        state,
        reissue_of,
        withdrawn_at,
        declined_at,
    ) in rows:
        positions.add(position)
        freed = state in FREEING_STATES or withdrawn_at is not None or declined_at is not None
        orders[participant_id].append((scenario_id, system_id))
        if reissue_of is None:
            fresh.add(participant_id)
        if not freed:
            kept.add(participant_id)
        if session_id is not None and system_id in attrition:
            attrition[system_id].started += 1
        if (
            freed
            and session_id is not None
            and participant_id not in left_on
            and (ended_at is None or end_reason in _LEFT_DURING)
        ):
            left_on[participant_id] = system_id
        for cell in (table.by_system[(scenario_id, system_id)], table.by_position[(scenario_id, position)]):
            if reissue_of is None:
                cell.planned += 1
            else:
                cell.reissued += 1
            if freed:
                cell.freed += 1
            elif ended_at is not None and end_reason in _FINISHED:
                cell.completed += 1
            elif session_id is not None and ended_at is None:
                cell.in_progress += 1
    table.positions = sorted(positions) or list(range(1, len(scenarios) + 1))
    _measure_imbalance(table, orders, fresh, kept)
    _measure_attrition(table, attrition, left_on)
    return table


def _measure_attrition(table: BalanceTable, attrition: dict, left_on: dict) -> None:
    """Fill the table's attrition per system (`left_on`: participant -> the system of the session they left)
    and its warning when the systems' rates differ by more than ATTRITION_GAP."""
    for system_id in left_on.values():
        if system_id in attrition:
            attrition[system_id].dropped += 1
    table.attrition = [attrition[system.id] for system in table.systems]
    rates = [a.rate for a in table.attrition if a.rate is not None]
    if len(rates) > 1 and max(rates) - min(rates) > ATTRITION_GAP and len(left_on) >= ATTRITION_MIN_DROPPED:
        rated = ", ".join(f"{a.system.code}: {a.rate:.0%}" for a in table.attrition if a.rate is not None)
        table.attrition_warning = (
            f"Attrition differs between systems ({rated}): "
            "participants may leave one system more than another. Re-issuing their rows restores the balance "
            "of completed sessions and hides this; report it."
        )


def _measure_imbalance(table: BalanceTable, orders: dict, fresh: set, kept: set) -> None:
    """Fill the table's imbalance: balance_report over the orders of the participants whose rows were issued
    fresh, and of those who hold their row now; and the largest gap between two systems in one order."""
    k, m = len(table.scenarios), len(table.systems)
    if not k or not m or not orders:
        return
    s_ix = {s.id: i for i, s in enumerate(table.scenarios)}
    u_ix = {u.id: i for i, u in enumerate(table.systems)}
    plans = {
        pk: [(s_ix[s], u_ix[u]) for s, u in order]
        for pk, order in orders.items()
        if len(order) == k and all(s in s_ix and u in u_ix for s, u in order)
    }
    issued = [plan for pk, plan in plans.items() if pk in fresh]
    held = [plan for pk, plan in plans.items() if pk in kept]
    table.issued, table.held = len(issued), len(held)
    reports = [balance_report(group, k, m, table.design) if group else {} for group in (issued, held)]
    keys = list(IMBALANCE_LABELS) if table.design == BETWEEN else list(IMBALANCE_LABELS)[:3]
    table.imbalance = [
        Imbalance(key, IMBALANCE_LABELS[key], reports[0].get(key), reports[1].get(key)) for key in keys
    ]
    if table.design == WITHIN and plans:
        table.system_spread = max(participant_system_spread(plan, range(m)) for plan in plans.values())


def study_participants_with_orders(*, study: Study):
    """Participants with their assignments (scenario, system, session) in two queries, each with both sides of
    a re-issued plan row: `reissue_of_code`, the code of the participant whose freed row they took over, and
    `reissued_to_code`, the code of the participant who took over theirs (None when neither)."""
    assignments = Assignment.objects.select_related("scenario", "system", "session").order_by("position")
    taker = Participant.objects.filter(reissue_of=OuterRef("pk")).values("code")[:1]  # once: a constraint
    return (
        study.participants.filter(preview_at__isnull=True)
        .annotate(reissue_of_code=F("reissue_of__code"), reissued_to_code=Subquery(taker))
        .order_by("enrolment_index")
        .prefetch_related(Prefetch("assignments", queryset=assignments))
    )


def _count_per_study(queryset, study_path: str) -> Coalesce:
    """A correlated COUNT of `queryset`'s rows per study (0 for none): one subquery in the list's one
    query."""
    counted = (
        queryset.filter(**{study_path: OuterRef("pk")})
        .order_by()
        .values(study_path)
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def studies_listed(user):
    """The researcher's study list, in one query whatever the number of studies: each study annotated with
    `status_shown` (open, paused, closed: studies/design/lifecycle.py), `enrolled` (participants, previews
    left out), `sessions_completed` (ended, however) and `sessions_in_progress` (started, not ended), the
    previews' sessions left out. Whether the design is locked is the study's own `design_locked_at`."""
    real_sessions = SearchSession.objects.filter(assignment__participant__preview_at__isnull=True)
    study_path = "assignment__participant__study"
    return (
        studies_visible_to(user)
        .annotate(
            status_shown=Coalesce("status", Value(OPEN)),
            enrolled=_count_per_study(Participant.objects.filter(preview_at__isnull=True), "study"),
            sessions_completed=_count_per_study(real_sessions.filter(ended_at__isnull=False), study_path),
            sessions_in_progress=_count_per_study(real_sessions.filter(ended_at__isnull=True), study_path),
        )
        .order_by("-created_at")
    )


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


def grade_levels(*, study: Study) -> list[GradeLevel]:
    """The study's relevance scale, lowest first (plain SQL: the search page shows it every time it opens)."""
    return [
        cast(GradeLevel, plain_sql.instance(GradeLevel, row))
        for row in plain_sql.rows(
            f"SELECT {plain_sql.select_list(GradeLevel, 'g')} FROM {plain_sql.table(GradeLevel)} g"
            " WHERE g.study_id = %s ORDER BY g.value",
            [study.pk],
        )
    ]


def collection_by_id(collection_id: int) -> Collection:
    """One collection by id (Collection.DoesNotExist when it is gone), for a task that was given its id."""
    return Collection.objects.get(pk=collection_id)
