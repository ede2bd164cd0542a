"""Counterbalanced orders for user studies (pure Python, no Django).

``balanced_latin_square`` builds a Williams design for the order of conditions;
``assignment_plan`` crosses it with the systems.  Two designs (``WITHIN``, ``BETWEEN``):

- within-subject (the default), as in the study of Järvelin et al. (ECIR 2008, section
  3.1): every participant works every scenario once, on consecutive blocks of systems
  whose lengths differ by at most one (3 scenarios on 2 systems: AAB or BBA);
- between-subjects: every participant works every scenario once, all on ONE system (their
  arm); arms take participants in turn and each arm goes through the Williams rows.

Scenarios, systems and positions are balanced across participants.  See
``docs/latin-square.md``.
"""

from __future__ import annotations

from collections.abc import Container, Hashable, Mapping, Sequence
from fractions import Fraction
from functools import cache
from typing import TypeVar

T = TypeVar("T")
U = TypeVar("U")

__all__ = [
    "BETWEEN",
    "DESIGNS",
    "WITHIN",
    "assignment_block_size",
    "assignment_plan",
    "balance_report",
    "balanced_latin_square",
    "participant_assignment",
    "participant_system_spread",
    "row_to_issue",
]

# The designs (Study.design; a null column reads as WITHIN).
WITHIN = "within"
BETWEEN = "between"
DESIGNS = (WITHIN, BETWEEN)

# Work limits (table cells scored) for the deterministic search that orders the
# rows of one block; see ``_block_order``.
_STRICT_WORK = 2_000_000
# From this many scenarios on, one system per scenario is planned round-robin (see _block_order).
_ROUND_ROBIN_FROM = 7
_RELAXED_WORK = 25_000_000


def balanced_latin_square(n: int) -> list[list[int]]:
    """Williams design for ``n`` conditions ``0..n-1``.

    Every row is a permutation of ``0..n-1``; every condition occurs equally often at
    every position; every ordered pair ``(a, b)``, ``a != b``, occurs as immediate
    neighbours (``a`` right before ``b``) equally often.  Even ``n``: ``n`` rows, each
    position and each ordered pair once.  Odd ``n``: ``2n`` rows (the cyclic square
    followed by its mirror image), each position and each ordered pair twice.
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    base = [0]
    low, high = 1, n - 1
    take_low = True
    while len(base) < n:
        if take_low:
            base.append(low)
            low += 1
        else:
            base.append(high)
            high -= 1
        take_low = not take_low
    rows = [[(b + i) % n for b in base] for i in range(n)]
    if n % 2:
        rows += [row[::-1] for row in rows]
    return rows


def _system_patterns(n_scenarios: int, n_systems: int) -> list[list[int]]:
    """The ``n_systems`` rotations of the blocked system sequence (e.g. AABB, BBAA; AAB, BBA).

    Position ``j`` of the base pattern has system ``j * m // k``: consecutive blocks of
    ``k // m`` or ``k // m + 1`` positions (when ``m`` divides ``k``, ``j // (k // m)``).
    With more systems than scenarios a participant meets ``k`` of them, once each.
    """
    k, m = n_scenarios, n_systems
    base = [j * m // k for j in range(k)]
    return [[(s + q) % m for s in base] for q in range(m)]


def _check_sizes(n_scenarios: int, n_systems: int, design: str = WITHIN) -> None:
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {', '.join(DESIGNS)}, got {design!r}")
    if n_scenarios < 1:
        raise ValueError("need at least one scenario")
    if n_systems < 1:
        raise ValueError("need at least one system")


def assignment_block_size(n_scenarios: int, n_systems: int, design: str = WITHIN) -> int:
    """Participants per complete, exactly balanced block of ``assignment_plan``.

    ``n_systems * L`` where ``L = len(balanced_latin_square(n_scenarios))`` is
    ``n_scenarios`` for an even and ``2 * n_scenarios`` for an odd number of scenarios:
    within-subject, the block crosses every scenario-order row with every rotation of
    the system blocks; between-subjects, every arm works every row once.
    4 scenarios x 2 systems: 8 participants; 3 x 2: 12.
    """
    _check_sizes(n_scenarios, n_systems, design)
    rows = n_scenarios if n_scenarios % 2 == 0 else 2 * n_scenarios
    return n_systems * rows


class _BudgetExceeded(Exception):
    pass


@cache
def _block_order(n_scenarios: int, n_systems: int) -> tuple[tuple[int, int], ...]:
    """Order of the ``(scenario row, system rotation)`` pairs inside one block.

    Depth-first search (deterministic: candidates sorted by squared imbalance, ties
    by index) for an order whose every prefix keeps each count within one of its
    exact share.  First with the system rotations taken cyclically (participant
    ``i`` of the block gets rotation ``i % n_systems``, so system x position is
    within one automatically) and all three tables (scenario x position, scenario x
    system, system x position) bounded; if that fails within its work budget, over
    all pairs with only the first two tables bounded (the third is still minimised
    by the candidate ranking); if that fails too, the greedy most-balanced order.
    """
    k, m = n_scenarios, n_systems
    rows = balanced_latin_square(k)
    if m == k and k >= _ROUND_ROBIN_FROM:
        # One system per scenario: go through every scenario-order row with one system rotation, then the
        # next rotation. Any prefix of the rows is part of a Latin square (or of two, for odd k), so each
        # scenario is within one of its share at every position and, since the rotation is fixed within a
        # round, with every system; the search below is slow here and could not do better.
        return tuple((r, q) for q in range(m) for r in range(len(rows)))
    pats = _system_patterns(k, m)
    cands = [(r, q) for r in range(len(rows)) for q in range(m)]
    cost = k * k + 2 * k * m  # table cells scored per candidate
    if k % m:
        # Systems that cannot share the scenarios equally (3 on 2, 5 on 3): a search that keeps every table
        # within one of its share, the rotations taken cyclically (so system x position is < 1), else rounds:
        # each row worked once on every rotation before the next row, so each round of m participants meets
        # every system once at every position and with every scenario (scenario x system and system x
        # position < 1 at every prefix; scenario x position only within m, exact after a complete block).
        # The free search below is slow here and let scenario x system drift to 3.
        cells = [[(rows[r][j], pats[q][j]) for j in range(k)] for r, q in cands]
        found = _order_search(cands, cells, k, m, (0, 0, 0), _STRICT_WORK // cost, True) or _order_search(
            cands, cells, k, m, (1, 1, 1), _STRICT_WORK // cost, True
        )
        if found is not None:
            return tuple(cands[c] for c in found)
        return tuple((r, q) for r in range(len(rows)) for q in range(m))
    cells = [[(rows[r][j], pats[q][j]) for j in range(k)] for r, q in cands]

    def attempt(
        tolerance: tuple[int | None, ...], budget: int | None, cyclic: bool = False
    ) -> list[int] | None:
        return _order_search(cands, cells, k, m, tolerance, budget, cyclic)

    order = (
        attempt((0, 0, 0), _STRICT_WORK // cost, cyclic=True)
        or attempt((0, 0, 1), _STRICT_WORK // cost)
        or attempt((1, 1, 1), _STRICT_WORK // cost, cyclic=True)
        or attempt((1, 1, None), _RELAXED_WORK // cost)
        or attempt((None, None, None), None)
    )
    assert order is not None
    return tuple(cands[c] for c in order)


def _order_search(
    cands: list[tuple[int, int]],
    cells: list[list[tuple[int, int]]],
    k: int,
    m: int,
    tolerance: tuple[int | None, ...],
    budget: int | None,
    cyclic: bool,
) -> list[int] | None:
    """One search of ``_block_order``: the candidates' indexes in order, or None when no order keeps every
    table within ``tolerance`` or the work ``budget`` runs out. ``budget`` None: no backtracking, the
    best-scored candidate at each position (the greedy order). ``cyclic``: participant ``i`` takes system
    rotation ``i % m``."""
    search = _OrderSearch(cands, cells, k, m, tolerance, budget, cyclic)
    try:
        return list(search.seq) if search.step() else None
    except _BudgetExceeded:
        return None


class _OrderSearch:
    """The state of one ``_order_search``: the three balance tables as the order grows, and the work spent."""

    def __init__(self, cands, cells, k, m, tolerance, budget, cyclic) -> None:
        self.cands, self.cells, self.m = cands, cells, m
        self.tolerance, self.budget, self.cyclic = tolerance, budget, cyclic
        self.backtrack = budget is not None
        self.sp = [[0] * k for _ in range(k)]  # scenario x position
        self.su = [[0] * m for _ in range(k)]  # scenario x system
        self.up = [[0] * k for _ in range(m)]  # system x position
        self.tables = ((self.sp, k), (self.su, m), (self.up, m))
        self.used = [False] * len(cands)
        self.seq: list[int] = []
        self.spent = 0

    def apply(self, c: int, sign: int) -> None:
        for j, (s, u) in enumerate(self.cells[c]):
            self.sp[s][j] += sign
            self.su[s][u] += sign
            self.up[u][j] += sign

    def options(self) -> list[tuple]:
        """(score, candidate) for the next position, best first: those within tolerance (all, greedy)."""
        p = len(self.seq) + 1
        options = []
        for c in range(len(self.cands)):
            if self.used[c] or (self.cyclic and self.cands[c][1] != (p - 1) % self.m):
                continue
            if self.budget is not None:
                self.spent += 1
                if self.spent > self.budget:
                    raise _BudgetExceeded
            self.apply(c, 1)
            ok, score = _tables_score(self.tables, self.tolerance, p)
            self.apply(c, -1)
            if ok or not self.backtrack:
                options.append((score, c))
        options.sort()
        return options if self.backtrack else options[:1]

    def step(self) -> bool:
        if len(self.seq) == len(self.cands):
            return True
        for _, c in self.options():
            self.used[c] = True
            self.apply(c, 1)
            self.seq.append(c)
            if self.step():
                return True
            self.seq.pop()
            self.apply(c, -1)
            self.used[c] = False
        return False


def _tables_score(
    tables: tuple[tuple[list[list[int]], int], ...], tolerance: tuple[int | None, ...], p: int
) -> tuple[bool, int]:
    """(every count within its table's tolerance of its exact share after ``p`` participants, the squared
    imbalance summed over the tables)."""
    ok = True
    score = 0
    for t, (tab, d) in enumerate(tables):
        for line in tab:
            for v in line:
                dev = v * d - p  # d * (count - exact share)
                score += dev * dev
                tol = tolerance[t]
                # tol 0: |count - share| < 1; tol 1: |count - share| <= 1
                if tol is not None and abs(dev) > d - 1 + tol:
                    ok = False
    return ok, score


def _between_row(n_scenarios: int, n_systems: int, index: int) -> tuple[int, int]:
    """(Williams row, arm) of participant ``index`` of a between-subjects plan.

    Arms take participants in turn (``index % m``), so arm sizes never differ by more
    than one.  Arm ``a`` goes through the rows of each Latin square of the Williams design
    in cyclic order from ``a * k // m``: any prefix of an arm's rows is part of a Latin
    square (for odd ``k``, one complete square and part of the other), so within an arm
    each scenario is within one of its share at every position, and the arms' starts,
    spread evenly over the square, keep the whole plan near balance too.
    """
    k, m = n_scenarios, n_systems
    arm, turn = index % m, index // m
    squares = 1 if k % 2 == 0 else 2
    turn %= squares * k
    square, step = divmod(turn, k)
    return square * k + (step + arm * k // m) % k, arm


def _plan_for(scenarios: Sequence[T], systems: Sequence[U], index: int, design: str) -> list[tuple[T, U]]:
    k, m = len(scenarios), len(systems)
    if design == BETWEEN:
        r, arm = _between_row(k, m, index)
        return [(scenarios[s], systems[arm]) for s in balanced_latin_square(k)[r]]
    order = _block_order(k, m)
    r, q = order[index % len(order)]
    row = balanced_latin_square(k)[r]
    pattern = _system_patterns(k, m)[q]
    return [(scenarios[row[j]], systems[pattern[j]]) for j in range(k)]


def participant_assignment(
    scenarios: Sequence[T], systems: Sequence[U], participant_index: int, design: str = WITHIN
) -> list[tuple[T, U]]:
    """The plan of one participant (0-based index); equals ``assignment_plan(..., i + 1)[i]``."""
    _check_sizes(len(scenarios), len(systems), design)
    if participant_index < 0:
        raise ValueError(f"participant_index must be >= 0, got {participant_index}")
    return _plan_for(scenarios, systems, participant_index, design)


def assignment_plan(
    scenarios: Sequence[T], systems: Sequence[U], n_participants: int, design: str = WITHIN
) -> list[list[tuple[T, U]]]:
    """One list of ``(scenario, system)`` in working order per participant.

    Every participant works every scenario once.  ``WITHIN``: on consecutive blocks of
    systems whose lengths differ by at most one (``len(scenarios) // len(systems)`` each
    when that divides).  ``BETWEEN``: all on one system, the arms taking participants in
    turn.  Each complete block of ``assignment_block_size(...)`` participants is exactly
    balanced: every scenario at every position, every scenario with every system and
    every system at every position equally often.  Deterministic: participant ``i``
    always gets the same plan whatever ``n_participants`` is.  Raises ``ValueError``
    if there are no scenarios or systems, the design is unknown, or ``n_participants``
    is negative.
    """
    _check_sizes(len(scenarios), len(systems), design)
    if n_participants < 0:
        raise ValueError(f"n_participants must be >= 0, got {n_participants}")
    return [_plan_for(scenarios, systems, i, design) for i in range(n_participants)]


def participant_system_spread(plan: Sequence[tuple[object, Hashable]], systems: Sequence[Hashable]) -> int:
    """Largest difference between two systems' task counts in one participant's plan (0 when every system
    gets the same number of tasks; a between-subjects plan: its length, one system has every task)."""
    counts = {system: 0 for system in systems}
    for _, system in plan:
        counts[system] = counts.get(system, 0) + 1
    return max(counts.values()) - min(counts.values()) if counts else 0


def balance_report(
    plans: Sequence[Sequence[tuple[int, int]]], n_scenarios: int, n_systems: int, design: str = WITHIN
) -> dict[str, Fraction]:
    """Largest ``|count - exact share|`` per table for plans over ``range`` labels.

    Helper for checks, tests and the balance page: keys ``scenario_position``,
    ``scenario_system`` and ``system_position``; for ``BETWEEN`` also
    ``arm_scenario_position`` (scenario x position inside each arm, against the arm's own
    share); all zero means exact balance.  The exact share is ``p / k`` for scenario x
    position and ``p / m`` for the other two tables (``p`` plans).
    """
    k, m, p = n_scenarios, n_systems, len(plans)
    sp = [[0] * k for _ in range(k)]
    su = [[0] * m for _ in range(k)]
    up = [[0] * k for _ in range(m)]
    arm_sp = [[[0] * k for _ in range(k)] for _ in range(m)]
    arm_size = [0] * m
    for plan in plans:
        for j, (s, u) in enumerate(plan):
            sp[s][j] += 1
            su[s][u] += 1
            up[u][j] += 1
            arm_sp[u][s][j] += 1
        if plan:
            arm_size[plan[0][1]] += 1

    def worst(tab: list[list[int]], total: int, d: int) -> Fraction:
        return max(abs(Fraction(v) - Fraction(total, d)) for line in tab for v in line)

    report = {
        "scenario_position": worst(sp, p, k),
        "scenario_system": worst(su, p, m),
        "system_position": worst(up, p, m),
    }
    if design == BETWEEN:
        report["arm_scenario_position"] = max(worst(arm_sp[u], arm_size[u], k) for u in range(m))
    return report


def row_to_issue(
    *,
    holders: Mapping[int, int],
    freed: Sequence[tuple[int, Hashable]],
    next_fresh: int,
    closed_rows: Container[int] = (),
) -> tuple[int, Hashable | None]:
    """The plan row for the next arrival, attrition-aware (psiTurk's cutoff, Gorilla's re-issue).

    ``holders`` counts, per row, the participants who hold it now (completed, or started and within the
    cutoff, or invited and not yet arrived); ``freed`` lists ``(row, key)`` of rows given up (a return, a
    time-out, a screen-out, a withdrawal) and not yet re-issued, oldest first. A freed row goes first: the
    one whose row is least held, then the lowest row (the plan's prefixes are its balanced ones), then the
    oldest. Returns ``(row, key of the freed row taken)``, or ``(next fresh row, None)`` when nothing is
    freed; rows in ``closed_rows`` are never issued (a fresh one is skipped past).
    """
    open_freed = [
        (holders.get(row, 0), row, n, key) for n, (row, key) in enumerate(freed) if row not in closed_rows
    ]
    if open_freed:
        _, row, _, key = min(open_freed, key=lambda item: item[:3])
        return row, key
    row = next_fresh
    while row in closed_rows:
        row += 1
    return row, None
