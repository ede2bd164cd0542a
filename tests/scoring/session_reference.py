"""A plain per-session Python implementation of sDCG, written straight from the SPEC, to check the
vectorized `scoring.lib.session` against. It shares no code with the library (not even the discounts), so a
mistake in one shows up as a difference. bench/scoring_sessions.py times it as the per-session loop."""

from __future__ import annotations

import math


def rank_discount(rank: int, formulation: str, b: float) -> float:
    if formulation == "2008":
        return 1 / (1 + math.log(rank, b))
    if formulation == "2002":
        return 1.0 if rank < b else 1 / math.log(rank, b)
    if formulation == "log2":
        return 1 / math.log2(rank + 1)
    if formulation == "kanoulas2011":
        return 1 / math.log(rank + b - 1, b)
    raise ValueError(formulation)


def query_discount(q: int, formulation: str, bq: float) -> float:
    if formulation == "kanoulas2011":
        return 1 / math.log(q + bq - 1, bq)
    return 1 / (1 + math.log(q, bq))


def reference_session(
    judged: dict[str, int],
    queries: list[list[str]],
    *,
    weights=(0, 1, 10, 100),
    b: float = 2,
    bq: float = 4,
    top: int = 10,
    formulation: str = "2008",
    duplicates: str = "every",
    short_lists: str = "pad",
    scanned_to: list[int] | None = None,
    width: int | None = None,
) -> dict:
    """Score one session: `judged` is its scenario's {doc: grade}; scanned_to (one depth per query) means
    scan='observed'. width holds the curves constant up to that many positions."""

    def gain(grade: int | None) -> float:
        if formulation == "kanoulas2011":
            return 0.0 if grade is None else 2.0**grade - 1
        return 0.0 if grade is None or grade < 0 else float(weights[grade])  # negative: unjudged

    ideal_vector = sorted((g for g in map(gain, judged.values()) if g > 0), reverse=True)
    curve, ideal, per_query = [], [], []
    total = ideal_total = 0.0
    seen = set()
    for q, results in enumerate(queries, start=1):
        cut = top if scanned_to is None else scanned_to[q - 1]
        length = cut if short_lists == "pad" else min(cut, len(results))
        dcg = 0.0
        for i in range(1, length + 1):
            doc = results[i - 1] if i <= len(results) else None
            g = gain(judged.get(doc)) if doc is not None else 0.0
            if doc is not None and duplicates == "first":
                if doc in seen:
                    g = 0.0
                seen.add(doc)
            disc = rank_discount(i, formulation, b) * query_discount(q, formulation, bq)
            dcg += g * rank_discount(i, formulation, b)
            total += g * disc
            ideal_total += (ideal_vector[i - 1] if i <= len(ideal_vector) else 0.0) * disc
            curve.append(total)
            ideal.append(ideal_total)
        per_query.append(dcg * query_discount(q, formulation, bq))
    own_length = len(curve)
    average = sum(curve) / own_length if own_length else 0.0
    if width is not None:
        curve += [total] * (width - own_length)
        ideal += [ideal_total] * (width - own_length)
    return {
        "curve": curve,
        "ideal": ideal,
        "normalized": [c / i if i else 0.0 for c, i in zip(curve, ideal, strict=True)],
        "per_query": per_query,
        "final": total,
        "normalized_final": total / ideal_total if ideal_total else 0.0,
        "last_query": per_query[-1],
        "best_query": max(per_query),
        "average": average,
    }
