"""Session DCG over generative turns, on the same scale as sDCG over results pages.

A session is a sequence of *steps* s = 1..n in the order they happened: a results page (`ResultsPage`, a
query's ranked list) or a generative turn (`Turn`, an answer with its citations). Both are "a ranked list at a
session position", so a mixed session is scored on one scale, sDCG's (ECIR 2008; docs/scoring-eval.md,
"Session measures"):

    L_s        the step's list under the variant (below), cut to its top X (*option* `top`, default 10)
    G_s[i]     weight(grade of L_s[i]); 0 for an unjudged document, a negative grade, a document that does
               not count under the variant, or (duplicates = "first") one that already gained earlier
    DCG_s      = sum_i G_s[i] * rank_discount(i)        (2008: 1 / (1 + log_b i); also "2002", "log2")
    sDCG_s     = DCG_s / (1 + log_bq s)                  (ECIR 2008 eq. 1)
    session    = sum_s sDCG_s; the curve is the running sum over the concatenated lists
                 G_s[i] * rank_discount(i) / (1 + log_bq s)

A turn's ranked list is its cited documents in the order of first citation (a document cited again keeps
its first place: the reader met it there). *Option* `variant`:

- `cited` (default): the cited documents only.
- `cited_then_retrieved`: the cited documents, then the documents retrieved and shown beside the answer that
  it did not cite, in the order shown. Its first len(cited) places are the `cited` list, so its gain is never
  below `cited`'s (gains are never negative).
- `exposed`: the `cited_then_retrieved` list, but a document gains only where it was on screen (the step's
  exposure flags; a document without a flag counts as not seen). Its places are kept, so reaching a later
  document costs the same rank discount whether or not an earlier one was seen, and its gain is never above
  `cited_then_retrieved`'s. It needs exposure flags on every step (refused otherwise).

A results page's list is its ranking as shown, under every variant; under `exposed` its unseen documents
gain 0 in the same way. The ideal (for the normalized value) is the scenario's ideal top-X vector (the recall
base's gains sorted, 2002 eq. 4) at every step, each discounted by its position, as in sDCG.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..metrics import PAPER_WEIGHTS, grade_gains, rank_discount
from ..session.params import DUPLICATES, check_b, check_bq

VARIANTS = ("cited", "cited_then_retrieved", "exposed")
TURN_FORMULATIONS = ("2008", "2002", "log2")


def _flags(exposed: Mapping[str, bool] | None) -> frozenset | None:
    if exposed is None:
        return None
    return frozenset(doc for doc, seen in exposed.items() if seen)


@dataclass(frozen=True)
class Turn:
    """A generative turn: `citations` in the order they occur in the answer (repeats allowed), `shown` the
    documents retrieved and shown beside it (in the order shown), `exposed` {document: on screen?} or None
    when no exposure was recorded."""

    citations: Sequence[str]
    shown: Sequence[str] = ()
    exposed: Mapping[str, bool] | None = None
    seen: frozenset | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "citations", tuple(self.citations))
        object.__setattr__(self, "shown", tuple(self.shown))
        object.__setattr__(self, "seen", _flags(self.exposed))


@dataclass(frozen=True)
class ResultsPage:
    """A results page: the query's `ranked` documents as shown; `exposed` as for a Turn."""

    ranked: Sequence[str]
    exposed: Mapping[str, bool] | None = None
    seen: frozenset | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ranked", tuple(self.ranked))
        object.__setattr__(self, "seen", _flags(self.exposed))


Step = Turn | ResultsPage


@dataclass(frozen=True)
class TurnParams:
    """The options of a generative session score; the defaults are sDCG's (ECIR 2008)."""

    variant: str = "cited"
    weights: tuple[float, ...] = PAPER_WEIGHTS
    b: float = 2.0
    bq: float = 4.0
    top: int = 10
    formulation: str = "2008"
    duplicates: str = "every"

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", tuple(float(w) for w in self.weights))
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown variant {self.variant!r}; choose one of {', '.join(VARIANTS)}")
        if self.formulation not in TURN_FORMULATIONS:
            raise ValueError(
                f"unknown formulation {self.formulation!r}; choose one of {', '.join(TURN_FORMULATIONS)}"
            )
        if self.duplicates not in DUPLICATES:
            raise ValueError(f"unknown duplicates {self.duplicates!r}; choose one of {', '.join(DUPLICATES)}")
        if not self.weights:
            raise ValueError("weights must give the gain of at least one grade")
        check_b(self.b)
        check_bq(self.bq)
        if int(self.top) != self.top or self.top < 1:
            raise ValueError(f"top (the scanning length X) must be a whole number >= 1, got {self.top}")


@dataclass(frozen=True, eq=False)
class GenerativeScores:
    """`score_generative_session`'s result.

    - kinds: "turn" or "query" for each step; dcg: each step's DCG at X; per_step: each step's sDCG.
    - curve: the running sum over the concatenated lists (each step's own length, at most X).
    - final: the session's total (the curve's last value; 0 for an empty session).
    - ideal_final, normalized_final: with an ideal given; normalized is 0 where the ideal is 0.
    - lists: each step's list under the variant, cut to X, and counts: whether each entry may gain.
    """

    kinds: tuple[str, ...]
    lists: tuple[tuple[str, ...], ...]
    counts: tuple[tuple[bool, ...], ...]
    dcg: np.ndarray
    per_step: np.ndarray
    curve: np.ndarray
    final: float
    ideal_final: float | None
    normalized_final: float | None


def first_citations(citations: Sequence[str]) -> list[str]:
    """The cited documents in the order of their first citation."""
    return list(dict.fromkeys(citations))


def step_list(step: Step, variant: str = "cited") -> tuple[list[str], list[bool]]:
    """A step's ranked list under the variant, and whether each entry may gain (False: not on screen, under
    `exposed`). Not cut to X."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    if isinstance(step, ResultsPage):
        docs = list(step.ranked)
    elif variant == "cited":
        docs = first_citations(step.citations)
    else:
        cited = first_citations(step.citations)
        taken = set(cited)
        docs = cited + [d for d in dict.fromkeys(step.shown) if d not in taken]
    if variant != "exposed":
        return docs, [True] * len(docs)
    if step.seen is None:
        raise ValueError("the exposed variant needs exposure flags on every step")
    return docs, [d in step.seen for d in docs]


def query_discount(positions: np.ndarray, bq: float) -> np.ndarray:
    """1 / (1 + log_bq s) for the session positions s = 1, 2, ... (ECIR 2008 eq. 1)."""
    return 1.0 / (1.0 + np.log(np.asarray(positions, dtype=np.float64)) / np.log(bq))


def _gains(docs: Sequence[str], grades: Mapping[str, int], weights) -> np.ndarray:
    marks = np.array([int(grades.get(d, -1)) for d in docs], dtype=np.int64)
    return grade_gains(marks, weights)


def score_generative_session(
    steps: Sequence[Step],
    grades: Mapping[str, int],
    params: TurnParams | None = None,
    *,
    ideal: Mapping[str, int] | Sequence[int] | None = None,
) -> GenerativeScores:
    """Score one session of results pages and generative turns (the module's formula). `grades`: the
    reference grade of each judged document; `ideal`: the grades of the scenario's recall base (a mapping or
    the grades alone) for the normalized value, or None. A grade outside the weights raises GradeError."""
    params = params or TurnParams()
    kinds, lists, counts, dcg, pieces = [], [], [], [], []
    gained: set[str] = set()
    discounts = query_discount(np.arange(1, len(steps) + 1), params.bq)
    for position, step in enumerate(steps):
        if not isinstance(step, Turn | ResultsPage):
            raise TypeError(f"step {position + 1} is a {type(step).__name__}, not a Turn or a ResultsPage")
        docs, may_gain = step_list(step, params.variant)
        docs, may_gain = docs[: params.top], may_gain[: params.top]
        gains = _gains(docs, grades, params.weights) * np.array(may_gain, dtype=np.float64)
        if params.duplicates == "first":
            for i, doc in enumerate(docs):
                if gains[i] > 0 and doc in gained:
                    gains[i] = 0.0
                elif gains[i] > 0:
                    gained.add(doc)
        discounted = gains * rank_discount(len(docs), params.formulation, params.b)
        kinds.append("turn" if isinstance(step, Turn) else "query")
        lists.append(tuple(docs))
        counts.append(tuple(may_gain))
        dcg.append(float(discounted.sum()))
        pieces.append(discounted * discounts[position])
    per_step = np.array(dcg, dtype=np.float64) * discounts
    curve = np.cumsum(np.concatenate(pieces)) if pieces else np.zeros(0)
    final = float(per_step.sum())
    ideal_final = normalized_final = None
    if ideal is not None:
        marks = list(ideal.values()) if isinstance(ideal, Mapping) else list(ideal)
        best = np.sort(grade_gains(np.array(marks, dtype=np.int64), params.weights))[::-1][: params.top]
        best = best[best > 0]
        ideal_dcg = float((best * rank_discount(len(best), params.formulation, params.b)).sum())
        ideal_final = ideal_dcg * float(discounts.sum())
        normalized_final = final / ideal_final if ideal_final > 0 else 0.0
    return GenerativeScores(
        kinds=tuple(kinds),
        lists=tuple(lists),
        counts=tuple(counts),
        dcg=np.array(dcg, dtype=np.float64),
        per_step=per_step,
        curve=curve,
        final=final,
        ideal_final=ideal_final,
        normalized_final=normalized_final,
    )
