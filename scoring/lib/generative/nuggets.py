"""Nugget recall of answers, turns and sessions, as the TREC 2024 RAG track defines it.

Sources: Pradeep, Thakur, Upadhyay, Campos, Craswell & Lin, "Initial Nugget Evaluation Results for the TREC
2024 RAG Track with the AutoNuggetizer Framework" (arXiv 2411.09607, 2024), and its longer version "The Great
Nugget Recall" (arXiv 2504.15068, SIGIR 2025); the track's scorer is castorini/nuggetizer
(`nuggetizer.core.metrics.calculate_nugget_scores`).

A topic's nuggets are atomic facts that a good answer contains, each labelled `vital` (must be present) or
`okay` (worthwhile, not required). Each answer is assigned, per nugget, `support`, `partial_support` or
`not_support`. With the credit s_i = 1, 0.5, 0 of nugget i's assignment (strict: s_i = 1 for `support` and 0
otherwise) and, for the weighted scores, w_i = 1 for a vital and 0.5 (*option* `okay_weight`) for an okay
nugget:

    All (A)             = sum_i s_i / |nuggets|                    (nuggetizer: all_score)
    All strict          = |support| / |nuggets|                    (strict_all_score)
    Vital (V)           = sum_{i vital} s_i / |vital|              (vital_score)
    Vital strict        = |vital with support| / |vital|           (strict_vital_score; the track's primary)
    Weighted (W)        = sum_i w_i s_i / sum_i w_i
    Weighted strict     = sum_i w_i [support_i] / sum_i w_i

A nugget with no assignment for an answer is `not_support` (the answer did not give it). Where the
denominator is 0 (a topic without vital nuggets for V), the value is 0, as the track's scorer gives, and the
counts on the result say so (docs/scoring-eval.md: an empty base is reported, never a NaN). Run scores are
the mean over topics (`mean_scores`, the scorer's `calculate_global_metrics`).

Turns and sessions (the project's extension, not the track's): a turn's answer is scored as an answer; a
session is credited, for each nugget, with the best assignment any of its turns received (the participant was
given the fact once it was given in some turn), and `nugget_curve` gives that session score after each turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

IMPORTANCES = ("vital", "okay")
ASSIGNMENTS = ("support", "partial_support", "not_support")
CREDIT = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
OKAY_WEIGHT = 0.5


class NuggetError(ValueError):
    """A nugget or an assignment that is not one of the labels; names the nugget and the field."""


@dataclass(frozen=True)
class NuggetScores:
    all: float
    all_strict: float
    vital: float
    vital_strict: float
    weighted: float
    weighted_strict: float
    nuggets: int
    vital_nuggets: int


def _check(importance: Mapping[str, str], assignment: Mapping[str, str]) -> None:
    for nugget, label in importance.items():
        if label not in IMPORTANCES:
            raise NuggetError(
                f"nugget {nugget!r}: importance {label!r} is not one of {', '.join(IMPORTANCES)}"
            )
    for nugget, label in assignment.items():
        if nugget not in importance:
            raise NuggetError(f"assignment names nugget {nugget!r}, which is not one of the topic's nuggets")
        if label not in ASSIGNMENTS:
            raise NuggetError(
                f"nugget {nugget!r}: assignment {label!r} is not one of {', '.join(ASSIGNMENTS)}"
            )


def _ratio(top: float, bottom: float) -> float:
    return top / bottom if bottom > 0 else 0.0


def nugget_scores(
    importance: Mapping[str, str], assignment: Mapping[str, str], *, okay_weight: float = OKAY_WEIGHT
) -> NuggetScores:
    """The six scores of one answer: `importance` {nugget: vital | okay}, `assignment` {nugget: support |
    partial_support | not_support} (a nugget left out is not_support)."""
    _check(importance, assignment)
    if not 0.0 <= okay_weight <= 1.0:
        raise ValueError(f"okay_weight must be between 0 and 1, got {okay_weight}")
    credit = {n: CREDIT[assignment.get(n, "not_support")] for n in importance}
    strict = {n: 1.0 if assignment.get(n) == "support" else 0.0 for n in importance}
    vital = [n for n, label in importance.items() if label == "vital"]
    weight = {n: 1.0 if label == "vital" else okay_weight for n, label in importance.items()}
    total_weight = sum(weight.values())
    return NuggetScores(
        all=_ratio(sum(credit.values()), len(importance)),
        all_strict=_ratio(sum(strict.values()), len(importance)),
        vital=_ratio(sum(credit[n] for n in vital), len(vital)),
        vital_strict=_ratio(sum(strict[n] for n in vital), len(vital)),
        weighted=_ratio(sum(weight[n] * credit[n] for n in importance), total_weight),
        weighted_strict=_ratio(sum(weight[n] * strict[n] for n in importance), total_weight),
        nuggets=len(importance),
        vital_nuggets=len(vital),
    )


def best_assignment(importance: Mapping[str, str], turns: Sequence[Mapping[str, str]]) -> dict[str, str]:
    """Each nugget's best assignment over the turns (support > partial_support > not_support)."""
    best: dict[str, str] = {}
    for turn in turns:
        _check(importance, turn)
        for nugget, label in turn.items():
            if CREDIT[label] > CREDIT[best.get(nugget, "not_support")]:
                best[nugget] = label
    return best


def session_nugget_scores(
    importance: Mapping[str, str], turns: Sequence[Mapping[str, str]], *, okay_weight: float = OKAY_WEIGHT
) -> NuggetScores:
    """The session's scores: each nugget credited with the best assignment of any turn."""
    return nugget_scores(importance, best_assignment(importance, turns), okay_weight=okay_weight)


def nugget_curve(
    importance: Mapping[str, str], turns: Sequence[Mapping[str, str]], *, okay_weight: float = OKAY_WEIGHT
) -> list[NuggetScores]:
    """The session's scores after each turn (turn 1, turns 1-2, ...): never falling."""
    return [
        session_nugget_scores(importance, turns[: k + 1], okay_weight=okay_weight) for k in range(len(turns))
    ]


SCORE_NAMES = tuple(f.name for f in fields(NuggetScores) if f.name not in ("nuggets", "vital_nuggets"))


def mean_scores(scores: Sequence[NuggetScores]) -> dict[str, float]:
    """The mean of each score over answers or topics (the track's run-level score); {} for none."""
    if not scores:
        return {}
    return {name: sum(getattr(s, name) for s in scores) / len(scores) for name in SCORE_NAMES}
