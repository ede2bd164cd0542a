"""Reads for pages and the API: a few queries each, never one per row."""

from __future__ import annotations

import hmac
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from typing import cast

from django.db.models import (
    Case,
    Count,
    DateTimeField,
    F,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce

from sessionlab import plain_sql
from studies.design.gold import GoldPair, gold_pending
from studies.design.latin_square import BETWEEN, WITHIN, balance_report, participant_system_spread
from studies.design.lifecycle import OPEN
from studies.design.orders import counterbalanced, design_of, design_summary
from studies.design.questionnaires import usable_items
from studies.models import (
    FREEING_STATES,
    Assignment,
    Collection,
    Event,
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


def studies_visible_to(user):
    """Studies a researcher may see: those they own or were added to; everything for superusers."""
    if user.is_superuser:
        return Study.objects.all()
    return Study.objects.filter(researchers=user).distinct()


def panel_ids_visible_to(*, user, study: Study) -> bool:
    """Whether the user is given the study's panel ids (they identify people on the panel): its owner alone,
    not a co-researcher, nor a superuser who does not own it (studies/interchange/panel_ids.py)."""
    return user is not None and user.is_authenticated and study.owner_id == user.pk


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
        " WHERE p.access_token_digest = %s",
        [access_token_digest(token)],
    )
    if not found:
        return None
    found_participant, found_study = plain_sql.instances(found[0], Participant, Study)
    participant, study = (
        cast(Participant, found_participant),
        cast(Study, found_study),
    )  # inner join: both set
    if not hmac.compare_digest(participant.access_token.encode(), token.encode()):
        return None
    participant.study = study
    return participant


participant_for_events = participant_by_token  # the events endpoint's name for it


def _plausible(token) -> bool:
    return (
        isinstance(token, str) and bool(token) and len(token) <= 128 and token.isascii()
    )  # real ones: 43 chars


@dataclass
class ParticipantStep:
    """Where a participant is: kind is consent | declined | withdrawn | questionnaire | scenario (read it and
    start) | pre_task (the study's questions before each task) | search | gold (the scenario's two gold
    documents, studies/design/gold.py) | post_task | done | no_assignments; `assignment` and `session` for the
    per-scenario steps, `gold` the pair for the gold step."""

    kind: str
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


def questionnaire_answered(*, study: Study, which: str) -> Counter:
    """How many stored answers of the study's questionnaire `which` (questionnaire, pre_task_questionnaire,
    post_task_questionnaire) hold each item name; previews left out (their data is not the study's). One
    query; the answers are read as they are, a few keys each."""
    answers: Iterable
    if which == "questionnaire":
        answers = (
            Participant.objects.filter(study=study, preview_at__isnull=True)
            .exclude(questionnaire_answers={})
            .values_list("questionnaire_answers", flat=True)
        )
    elif which == "pre_task_questionnaire":
        answers = (
            Assignment.objects.filter(participant__study=study, participant__preview_at__isnull=True)
            .exclude(pre_task_answers={})
            .values_list("pre_task_answers", flat=True)
        )
    else:
        answers = (
            SearchSession.objects.filter(
                assignment__participant__study=study, assignment__participant__preview_at__isnull=True
            )
            .exclude(post_task_answers={})
            .values_list("post_task_answers", flat=True)
        )
    counts: Counter = Counter()
    for answer in answers:
        if isinstance(answer, dict):
            counts.update(key for key, value in answer.items() if value not in (None, ""))
    return counts


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
    task_total = sum(not a.scenario.practice for a in assignments)
    for number, assignment in enumerate(assignments, start=1):
        task = sum(not a.scenario.practice for a in assignments[:number])
        session = getattr(assignment, "session", None)
        step = None
        if session is None:
            # The questions before each task come before the scenario's start (none when the study has none).
            asks_pre_task = bool(usable_items(participant.study.pre_task_questionnaire))
            step = "pre_task" if asks_pre_task and not assignment.pre_task_answers else "scenario"
        elif session.ended_at is None:
            step = "search"
        elif not session.post_task_answers and session.end_reason != SearchSession.EndReason.WITHDRAWN:
            # The scenario's gold documents, when the study has them, come between the search and its
            # questions.
            pair = gold_pending(participant=participant, session=session, scenario=assignment.scenario)
            if pair is not None:
                return ParticipantStep(
                    "gold", assignment, session, number, len(assignments), pair, task, task_total
                )
            step = "post_task"
        if step:
            return ParticipantStep(
                step, assignment, session, number, len(assignments), None, task, task_total
            )
    return ParticipantStep(
        "done",
        total=len(assignments),
        position=len(assignments),
        task_number=task_total,
        task_total=task_total,
    )


# --- the event log --------------------------------------------------------------------------------------

# What Python's datetime can hold. PostgreSQL stores times beyond it (a client's `0001-01-01T00:00:00+14:00`
# is 0000-12-31 in UTC, 1 BC), and reading such a row would fail the page or the export holding it; the events
# endpoints no longer store one (studies/participation/events/event_checks.py), rows stored before read as
# null.
_READABLE_TIMES = (datetime(1, 1, 2, tzinfo=UTC), datetime(9999, 12, 30, tzinfo=UTC))


def events_readable(queryset):
    """Events with `readable_client_time` (the client time, or None where Python cannot hold it) and the
    column itself deferred: the serializers and exports read that instead."""
    return queryset.defer("client_time").annotate(
        readable_client_time=Case(
            When(client_time__range=_READABLE_TIMES, then=F("client_time")),
            default=Value(None),
            output_field=DateTimeField(),
        )
    )


def study_events_in_log_order(study_id: int):
    """The study's events in the log's order (id), found through its participants and then sorted.

    Ordered by the expression id + 0, not the column: with the column PostgreSQL may walk the primary key of
    the whole log in id order, filtering by study, as if the study's rows were spread evenly over it; when
    they are the newest rows of a 10-million-event log the first page of the API's event list took 3.3 s
    instead of 3 ms. So the cost is the study's own events, never the log's (docs/performance-load.md, "The
    event log at scale")."""
    return Event.objects.filter(participant__study_id=study_id).order_by((F("id") + 0).asc())


def events_read(queryset):
    """The events of `queryset` (events_readable), each with `client_time` set from the readable one."""
    for event in events_readable(queryset):
        event.client_time = event.readable_client_time
        yield event


def collection_by_id(collection_id: int) -> Collection:
    """One collection by id (Collection.DoesNotExist when it is gone), for a task that was given its id."""
    return Collection.objects.get(pk=collection_id)
