"""The options of a session scoring run (`SessionParams`, the ECIR 2008 paper's by default) and the default
gains of a grade scale: weight(g) = 0 for the lowest grade, 10^(g - lowest - 1) above it (0, 1, 10, 100 on
0..3). The log bases: b > 1 for the rank discount, 1 < bq < 1000 for the query discount (ECIR 2008 eq. 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

FORMULATIONS = ("2008", "2002", "log2", "kanoulas2011")
DUPLICATES = ("every", "first")
SHORT_LISTS = ("pad", "as_is")
SCANS = ("fixed", "observed", "exposure")  # exposure: depths measured on screen
SUMMARIES = ("final", "normalized_final", "last_query", "best_query", "average")
# What the pages and documents call each summary.
SUMMARY_LABELS = {
    "final": "final concatenated gain",
    "normalized_final": "normalized final gain",
    "last_query": "last query's sDCG",
    "best_query": "best query's sDCG",
    "average": "average gain (avg-pos)",
}


PAPER_WEIGHTS = (0.0, 1.0, 10.0, 100.0)  # ECIR 2008's sharp weighting of the grades 0..3


def default_weights(grades: Sequence[int]) -> tuple[float, ...]:
    """The default weights for a grade scale (one per grade 0..max): the paper's 0, 1, 10, 100 on 0..3, and on
    any other scale the same rule, each grade above the lowest worth ten times the one below it and the lowest
    (not relevant) worth 0: 0..4 gives 0, 1, 10, 100, 1000; 0..1 gives 0, 1; 1..4 gives 0, 0, 1, 10, 100.
    Negative grades are not steps of a scale (see docs/scoring-sessions.md, "Grades")."""
    steps = sorted({int(g) for g in grades if int(g) >= 0})
    if not steps:
        return PAPER_WEIGHTS
    lowest = steps[0]
    return tuple(0.0 if g <= lowest else 10.0 ** (g - lowest - 1) for g in range(steps[-1] + 1))


@dataclass(frozen=True)
class SessionParams:
    """The options of a session scoring run; the defaults are the ECIR 2008 paper's.

    `weights[g]` is the gain of grade g (ignored by `kanoulas2011`, whose gain is 2^g - 1). The curves are
    held constant after each session's end up to the longest session of the batch, or up to `pad_to` queries
    of `top` ranks if that is longer; a session longer than pad_to queries is an error.
    """

    weights: tuple[float, ...] = PAPER_WEIGHTS
    b: float = 2.0
    bq: float = 4.0
    top: int = 10
    formulation: str = "2008"
    duplicates: str = "every"
    short_lists: str = "pad"
    scan: str = "fixed"
    pad_to: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", tuple(float(w) for w in self.weights))
        if not self.weights:
            raise ValueError("weights must give the gain of at least one grade")
        _check_choice("formulation", self.formulation, FORMULATIONS)
        _check_choice("duplicates", self.duplicates, DUPLICATES)
        _check_choice("short_lists", self.short_lists, SHORT_LISTS)
        _check_choice("scan", self.scan, SCANS)
        check_b(self.b)
        check_bq(self.bq)
        if int(self.top) != self.top or self.top < 1:
            raise ValueError(f"top (the scanning length X) must be a whole number >= 1, got {self.top}")
        if self.pad_to is not None and (int(self.pad_to) != self.pad_to or self.pad_to < 1):
            raise ValueError(f"pad_to must be a whole number of queries >= 1, got {self.pad_to}")


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose one of {', '.join(choices)}")


def check_b(b: float) -> None:
    if not (b > 1.0):
        raise ValueError(f"the rank log base b must be greater than 1, got {b}")


def check_bq(bq: float) -> None:
    if not (1.0 < bq < 1000.0):
        raise ValueError(f"the query log base bq must satisfy 1 < bq < 1000 (ECIR 2008 eq. 1), got {bq}")
