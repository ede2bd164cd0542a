"""How a study's conclusion changes between two references (a people-only reference against one
with a machine assessor's grades in it): per system the mean of a per-session measure under each, the
system order under each, Kendall's tau between them, and the paired test between systems under each.

Kendall's tau (tau-b, Kendall 1945; `scipy.stats.kendalltau`) between two scorings x and y of the same n
items: (P - Q) / sqrt((P + Q + T_x) (P + Q + T_y)), with P the concordant pairs, Q the discordant, T_x the
pairs tied in x only and T_y in y only. 1: the same order; -1: reversed. It is taken between the systems'
means (with two systems it can only be 1 or -1), between the sessions' values, and between the system x
scenario cells' means, which say something with two systems too. Pure: numpy and scipy, no Django."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from .number_text import number_text
from .statistics import ALPHA, compare_systems, p_text


@dataclass(frozen=True)
class Tau:
    """Kendall's tau-b between two scorings of the same items, its two-sided p, and the items' count."""

    tau: float | None
    p_value: float | None
    n: int

    def text(self) -> str:
        if self.tau is None:
            return f"not defined (n = {self.n})"
        return f"{number_text(self.tau, '.3f')} ({p_text(self.p_value)}, n = {self.n})"


@dataclass(frozen=True)
class PairTest:
    """The test between two systems under one reference: p < ALPHA or not, and which system is higher."""

    systems: str  # "A vs B"
    test: str
    p_value: float | None
    n: int
    higher: str | None  # the system with the higher mean; None when equal

    @property
    def significant(self) -> bool:
        return self.p_value is not None and bool(np.isfinite(self.p_value)) and self.p_value < ALPHA


@dataclass(frozen=True)
class UnderReference:
    """One reference's reading: each system's mean (and session count), the order, the pairs' tests."""

    name: str
    means: dict[str, float]
    counts: dict[str, int]
    order: list[str]
    tests: list[PairTest]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ConclusionChange:
    summary: str
    before: UnderReference
    after: UnderReference
    tau_systems: Tau
    tau_sessions: Tau
    tau_cells: Tau
    order_holds: bool
    significance_holds: bool
    sentence: str


def kendall_tau(first: Sequence[float] | np.ndarray, second: Sequence[float] | np.ndarray) -> Tau:
    """Kendall's tau-b of the paired scorings `first` and `second` (None where it is not defined: fewer than
    two items, or one scoring constant)."""
    x, y = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    n = int(len(x))
    if n < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return Tau(None, None, n)
    result = stats.kendalltau(x, y)
    tau, p = float(result.statistic), float(result.pvalue)
    return Tau(tau if np.isfinite(tau) else None, p if np.isfinite(p) else None, n)


def system_order(means: dict[str, float]) -> list[str]:
    """The systems from the highest mean down (equal means by label, so the order is stable)."""
    return sorted(means, key=lambda label: (-means[label], str(label)))


def order_text(order: Sequence[str], means: dict[str, float]) -> str:
    """ "A > B = C": a ">" between different means, "=" between equal ones."""
    text = str(order[0]) if order else ""
    for previous, label in zip(order, order[1:], strict=False):
        text += (" = " if means[label] == means[previous] else " > ") + str(label)
    return text


def under_reference(
    name: str, values: np.ndarray, systems: np.ndarray, blocks: np.ndarray, *, summary: str, resamples: int
) -> UnderReference:
    """The paired t-test by block (participant) where blocks used every system, else Welch's t over the
    sessions: the first test of each pair that scoring.lib.statistics.compare_systems gives."""
    result = compare_systems(values, systems, blocks, summary=summary, paired=True, resamples=resamples)
    pairs = [t for t in result.tests if t.systems != "all" and t.test.startswith("paired t-test")]
    notes = list(result.notes[:-1] if pairs else result.notes)
    if not pairs:
        unpaired = compare_systems(
            values, systems, blocks, summary=summary, paired=False, resamples=resamples
        )
        pairs = [t for t in unpaired.tests if t.systems != "all"]
        notes.append("Unpaired (Welch's t over the sessions): no two participants used every system.")
    means = {
        str(label): float(values[systems == label].mean()) for label in sorted(set(systems.tolist()), key=str)
    }
    counts = {label: int((systems == label).sum()) for label in means}
    tests = []
    for t in pairs:
        first, second = t.systems.split(" vs ")
        higher = None if means[first] == means[second] else max((first, second), key=lambda s: means[s])
        tests.append(PairTest(t.systems, t.test, t.p_value, t.n, higher))
    return UnderReference(name, means, counts, system_order(means), tests, notes)


def conclusion_change(
    before: Sequence[float],
    after: Sequence[float],
    systems: Sequence,
    blocks: Sequence,
    scenarios: Sequence,
    *,
    names: tuple[str, str] = ("before", "after"),
    summary: str = "value",
    resamples: int = 200,
) -> ConclusionChange:
    """The conclusion under each reference, for the same sessions: `before[i]` and `after[i]` are session
    i's measure under each, `systems`, `blocks` (participants) and `scenarios` label it. The conclusion
    holds when the system order is the same and every pair is significant at ALPHA under both (higher
    system the same) or under neither."""
    before_v, after_v = np.asarray(before, dtype=np.float64), np.asarray(after, dtype=np.float64)
    systems_a = np.asarray([str(s) for s in systems])
    blocks_a, scenarios_a = np.asarray(blocks), np.asarray([str(s) for s in scenarios])
    first = under_reference(names[0], before_v, systems_a, blocks_a, summary=summary, resamples=resamples)
    second = under_reference(names[1], after_v, systems_a, blocks_a, summary=summary, resamples=resamples)
    labels = list(first.means)
    cells = sorted({(s, c) for s, c in zip(systems_a.tolist(), scenarios_a.tolist(), strict=True)})
    cell_of = [(systems_a == s) & (scenarios_a == c) for s, c in cells]
    # Compared as text, so "A > B" becoming "A = B" is a change though the sorted labels are the same.
    order_holds = order_text(first.order, first.means) == order_text(second.order, second.means)
    changed = [
        (a, b)
        for a, b in zip(first.tests, second.tests, strict=True)
        if a.significant != b.significant or (a.significant and a.higher != b.higher)
    ]
    return ConclusionChange(
        summary=summary,
        before=first,
        after=second,
        tau_systems=kendall_tau([first.means[k] for k in labels], [second.means[k] for k in labels]),
        tau_sessions=kendall_tau(before_v, after_v),
        tau_cells=kendall_tau([before_v[m].mean() for m in cell_of], [after_v[m].mean() for m in cell_of]),
        order_holds=order_holds,
        significance_holds=not changed,
        sentence=_sentence(first, second, order_holds, changed),
    )


def _significance(test: PairTest) -> str:
    if test.significant:
        return f"significant ({p_text(test.p_value)}, {test.higher} higher)"
    return f"not significant ({p_text(test.p_value)})"


def _sentence(
    first: UnderReference, second: UnderReference, order_holds: bool, changed: list[tuple[PairTest, PairTest]]
) -> str:
    """The verdict in words: whether the order and the significance at ALPHA hold, and what changes."""
    was, now = order_text(first.order, first.means), order_text(second.order, second.means)
    if order_holds and not changed:
        significant = [t.systems for t in first.tests if t.significant]
        which = ", ".join(significant) + " significant under both" if significant else "no pair significant"
        return (
            f"The conclusion holds: the same order of systems ({now}) under {first.name} and {second.name}, "
            f"and at the {ALPHA:g} level {which}."
        )
    tests = [
        f"{a.systems} is {_significance(a)} under {first.name} but {_significance(b)} under {second.name}"
        for a, b in changed
    ]
    if order_holds:
        return f"The conclusion changes: the order of systems stays {now}, but " + "; ".join(tests) + "."
    order = f"the order of systems {was} under {first.name} becomes {now} under {second.name}"
    return "The conclusion changes: " + "; ".join([order, *tests]) + "."
