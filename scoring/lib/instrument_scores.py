"""The scores of two standard questionnaires, from one respondent's answers. Pure Python, no Django: the
exports (studies/interchange/answer_columns.py) and the dashboards call it per answer, and it works on plain
numbers.

- Raw NASA-TLX (Hart 2006, "NASA-Task Load Index (NASA-TLX); 20 years later", raw TLX: the pairwise weighting
  dropped): the mean of the six subscale ratings, each on the paper form's 0..100 (21 marks, steps of 5), so
  the score is 0..100. `tlx_raw(mental, physical, temporal, performance, effort, frustration)`.
- SUS (Brooke 1996): ten responses on 1..5; odd items contribute (response - 1), even items (5 - response);
  the sum of contributions (0..40) times 2.5 is the score, 0..100.

A missing or out-of-range response gives None: a partial instrument has no score (neither source defines
one), and a made-up value would pass unnoticed into an analysis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

TLX_SUBSCALES = ("mental", "physical", "temporal", "performance", "effort", "frustration")
TLX_MAX = 100.0
SUS_ITEMS = 10


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def tlx_raw(ratings: Sequence) -> float | None:
    """The raw TLX (0..100): the mean of the six subscale ratings (0..100 each, in TLX_SUBSCALES order);
    None when one is missing or outside 0..100."""
    if len(ratings) != len(TLX_SUBSCALES):
        return None
    values = [_number(r) for r in ratings]
    if any(v is None or not 0 <= v <= TLX_MAX for v in values):
        return None
    return sum(v for v in values if v is not None) / len(values)


def tlx_rating(step, *, low: float = 0, high: float = 20) -> float | None:
    """A mark on a low..high scale as its 0..100 rating. With 0..20 (the paper form's 21 marks) this is Hart's
    "count the marks, subtract 1, multiply by 5"; None outside low..high."""
    value = _number(step)
    if value is None or not low <= value <= high or high <= low:
        return None
    return (value - low) * TLX_MAX / (high - low)


def sus_score(responses: Sequence) -> float | None:
    """The SUS score (0..100) of ten responses on 1..5 (item 1 first); None when one is missing or outside
    1..5."""
    if len(responses) != SUS_ITEMS:
        return None
    values = [_number(r) for r in responses]
    if any(v is None or not 1 <= v <= 5 for v in values):
        return None
    contributions = [
        (v - 1) if n % 2 else (5 - v) for n, v in enumerate((v for v in values if v is not None), start=1)
    ]
    return 2.5 * sum(contributions)
