"""Standard questionnaires shipped with SessionLab, as items of studies/design/questionnaires.py.

- NASA-TLX (Hart & Staveland 1988): the six subscales of the raw TLX (no pairwise weighting), each rated on
  21 steps (0 = very low .. 20 = very high; the paper form's 0..100 in steps of 5, divided by 5). Performance
  runs from 0 = perfect to 20 = failure, as on the original form.
- SUS, the System Usability Scale (Brooke 1996): ten items, 1 = strongly disagree .. 5 = strongly agree; the
  score is 2.5 x (sum of (odd item - 1) and (5 - even item)).
- A post-task satisfaction item (1 = very dissatisfied .. 5 = very satisfied).

Item names carry the instrument's prefix (tlx_, sus_), so that answers are found by name in the exports.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Instrument:
    key: str
    title: str
    reference: str
    items: tuple[dict, ...]


def _tlx(name: str, question: str, low: str, high: str) -> dict:
    return {
        "name": f"tlx_{name}",
        "label": f"{question} (0 = {low}, 20 = {high})",
        "kind": "scale",
        "min": 0,
        "max": 20,
    }


NASA_TLX = Instrument(
    "nasa_tlx",
    "NASA-TLX (raw, six subscales)",
    "Hart, S. G. & Staveland, L. E. (1988). Development of NASA-TLX. In Human Mental Workload, 139-183.",
    (
        _tlx("mental", "Mental demand: how mentally demanding was the task?", "very low", "very high"),
        _tlx("physical", "Physical demand: how physically demanding was the task?", "very low", "very high"),
        _tlx(
            "temporal",
            "Temporal demand: how hurried or rushed was the pace of the task?",
            "very low",
            "very high",
        ),
        _tlx(
            "performance",
            "Performance: how successful were you in accomplishing what you were asked to do?",
            "perfect",
            "failure",
        ),
        _tlx(
            "effort",
            "Effort: how hard did you have to work to accomplish your level of performance?",
            "very low",
            "very high",
        ),
        _tlx(
            "frustration",
            "Frustration: how insecure, discouraged, irritated, stressed and annoyed were you?",
            "very low",
            "very high",
        ),
    ),
)

_SUS_STATEMENTS = (
    "I think that I would like to use this system frequently.",
    "I found the system unnecessarily complex.",
    "I thought the system was easy to use.",
    "I think that I would need the support of a technical person to be able to use this system.",
    "I found the various functions in this system were well integrated.",
    "I thought there was too much inconsistency in this system.",
    "I would imagine that most people would learn to use this system very quickly.",
    "I found the system very cumbersome to use.",
    "I felt very confident using the system.",
    "I needed to learn a lot of things before I could get going with this system.",
)

SUS = Instrument(
    "sus",
    "SUS, System Usability Scale (10 items)",
    "Brooke, J. (1996). SUS: a 'quick and dirty' usability scale. "
    "In Usability Evaluation in Industry, 189-194.",
    tuple(
        {
            "name": f"sus_{n}",
            "label": f"{statement} (1 = strongly disagree, 5 = strongly agree)",
            "kind": "scale",
            "min": 1,
            "max": 5,
        }
        for n, statement in enumerate(_SUS_STATEMENTS, start=1)
    ),
)

SATISFACTION = Instrument(
    "satisfaction",
    "Post-task satisfaction (one item)",
    "A single 5-point satisfaction rating, as in most interactive IR studies' post-task questionnaires.",
    (
        {
            "name": "satisfaction",
            "label": "How satisfied are you with the results of this search? "
            "(1 = very dissatisfied, 5 = very satisfied)",
            "kind": "scale",
            "min": 1,
            "max": 5,
        },
    ),
)

INSTRUMENTS: dict[str, Instrument] = {i.key: i for i in (NASA_TLX, SUS, SATISFACTION)}


def sus_score(answers: dict) -> float | None:
    """The SUS score (0..100) of one participant's answers, or None when an item is missing."""
    try:
        values = [int(answers[f"sus_{n}"]) for n in range(1, 11)]
    except (KeyError, TypeError, ValueError):
        return None
    return 2.5 * sum((v - 1) if n % 2 else (5 - v) for n, v in enumerate(values, start=1))
