"""Questionnaire templates shipped with SessionLab, as items of studies/questionnaires/items.py: the set-up
page adds one to any of a study's three questionnaires, then the researcher edits it.

- Demographics: age, gender, education (each choice with "Other (please specify)"), occupation, how often one
  searches the web.
- Topic familiarity (before each task): familiarity, interest, expected difficulty, on 1..5 with anchors.
- Prior knowledge (before each task): how much one knows of the topic (1..5) and what, in one's own words.
- NASA-TLX (Hart & Staveland 1988): the six subscales of the raw TLX (no pairwise weighting), each rated on
  21 steps (0 = very low .. 20 = very high; the paper form's 0..100 in steps of 5, divided by 5). Performance
  runs from 0 = perfect to 20 = failure, as on the original form.
- SUS, the System Usability Scale (Brooke 1996): ten items, 1 = strongly disagree .. 5 = strongly agree.
- A post-task satisfaction item (1 = very dissatisfied .. 5 = very satisfied).

Item names carry the instrument's prefix (tlx_, sus_), so that answers are found by name: `instrument_scores`
computes the raw TLX and the SUS score (scoring/lib/instrument_scores.py) of any answers that hold all of an
instrument's items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scoring.lib.instrument_scores import TLX_SUBSCALES, tlx_rating, tlx_raw
from scoring.lib.instrument_scores import sus_score as sus_of_responses


@dataclass(frozen=True)
class Instrument:
    key: str
    title: str
    reference: str
    items: tuple[dict, ...]


def _scale(name: str, label: str, low: int, high: int, min_label: str, max_label: str) -> dict:
    return {
        "name": name,
        "label": label,
        "kind": "scale",
        "min": low,
        "max": high,
        "min_label": min_label,
        "max_label": max_label,
    }


DEMOGRAPHICS = Instrument(
    "demographics",
    "Demographics (age, gender, education, occupation, web search)",
    "The usual description of a sample: edit the choices to the population you recruit from.",
    (
        {"name": "age", "label": "Your age (years)", "kind": "integer", "min": 16, "max": 120},
        {
            "name": "gender",
            "label": "Your gender",
            "kind": "choice",
            "choices": ["woman", "man", "non-binary", "prefer not to say"],
            "other": True,
        },
        {
            "name": "education",
            "label": "Your highest completed education",
            "kind": "choice",
            "choices": [
                "secondary school or less",
                "vocational training",
                "bachelor's degree",
                "master's degree",
                "doctorate",
            ],
            "other": True,
        },
        {"name": "occupation", "label": "Your occupation", "kind": "text", "required": False},
        {
            "name": "web_search_frequency",
            "label": "How often do you search the web?",
            "kind": "choice",
            "choices": ["several times a day", "about once a day", "a few times a week", "less often"],
        },
    ),
)

TOPIC_FAMILIARITY = Instrument(
    "topic_familiarity",
    "Topic familiarity (familiarity, interest, expected difficulty)",
    "Asked before each task, as in the TREC interactive tracks' pre-search questionnaires.",
    (
        _scale(
            "topic_familiarity",
            "How familiar are you with this topic?",
            1,
            5,
            "not at all familiar",
            "very familiar",
        ),
        _scale(
            "topic_interest",
            "How interested are you in this topic?",
            1,
            5,
            "not at all interested",
            "very interested",
        ),
        _scale(
            "expected_difficulty",
            "How difficult do you expect this search to be?",
            1,
            5,
            "very easy",
            "very difficult",
        ),
    ),
)

PRIOR_KNOWLEDGE = Instrument(
    "prior_knowledge",
    "Prior knowledge (a rating and what you know)",
    "Asked before each task: a self-rating, and a short text to compare with what is learnt.",
    (
        _scale(
            "prior_knowledge",
            "How much do you know about this topic?",
            1,
            5,
            "nothing",
            "a great deal",
        ),
        {
            "name": "prior_knowledge_text",
            "label": "In a few words: what do you already know about this topic?",
            "kind": "text",
            "required": False,
        },
    ),
)


def _tlx(name: str, question: str, low: str, high: str) -> dict:
    return _scale(f"tlx_{name}", question, 0, 20, low, high)


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
        _scale(f"sus_{n}", statement, 1, 5, "strongly disagree", "strongly agree")
        for n, statement in enumerate(_SUS_STATEMENTS, start=1)
    ),
)

SATISFACTION = Instrument(
    "satisfaction",
    "Post-task satisfaction (one item)",
    "A single 5-point satisfaction rating, as in most interactive IR studies' post-task questionnaires.",
    (
        _scale(
            "satisfaction",
            "How satisfied are you with the results of this search?",
            1,
            5,
            "very dissatisfied",
            "very satisfied",
        ),
    ),
)

# In the order the set-up page lists them; the first is what its form proposes.
INSTRUMENTS: dict[str, Instrument] = {
    i.key: i for i in (DEMOGRAPHICS, TOPIC_FAMILIARITY, PRIOR_KNOWLEDGE, NASA_TLX, SUS, SATISFACTION)
}

# --- scores ------------------------------------------------------------------------------------------------

TLX_NAMES = tuple(f"tlx_{s}" for s in TLX_SUBSCALES)
SUS_NAMES = tuple(f"sus_{n}" for n in range(1, 11))
# An instrument score's key: a dot, which no item name holds, so it never meets an item's column.
TLX_RAW = "score.tlx_raw"
SUS_SCORE = "score.sus"


def _scale_items(items: Sequence[Mapping], names: Sequence[str]) -> list[Mapping] | None:
    by_name = {item.get("name"): item for item in items if isinstance(item, Mapping)}
    found = [by_name.get(name) for name in names]
    if any(item is None or item.get("kind") != "scale" for item in found):
        return None
    return [item for item in found if item is not None]


def instrument_score_keys(items: Sequence[Mapping]) -> list[str]:
    """The scores the questionnaire's items allow: TLX_RAW when it has the six tlx_ scales, SUS_SCORE when it
    has the ten sus_ items as scales of 1..5 (the only range Brooke's scoring holds for)."""
    keys = []
    if _scale_items(items, TLX_NAMES) is not None:
        keys.append(TLX_RAW)
    sus = _scale_items(items, SUS_NAMES)
    if sus is not None and all(item.get("min") == 1 and item.get("max") == 5 for item in sus):
        keys.append(SUS_SCORE)
    return keys


def instrument_scores(items: Sequence[Mapping], answers: Mapping | None) -> dict[str, float | None]:
    """{score key: the score of these answers, or None when an item is unanswered}, for each score the items
    allow (instrument_score_keys). TLX subscales on any min..max scale are rated 0..100 first."""
    answers = answers if isinstance(answers, Mapping) else {}
    scores: dict[str, float | None] = {}
    for key in instrument_score_keys(items):
        if key == TLX_RAW:
            tlx = _scale_items(items, TLX_NAMES) or []
            ratings = [
                tlx_rating(answers.get(item["name"]), low=item["min"], high=item["max"]) for item in tlx
            ]
            scores[key] = tlx_raw(ratings)
        else:
            scores[key] = sus_of_responses([answers.get(name) for name in SUS_NAMES])
    return scores


def sus_score(answers: Mapping) -> float | None:
    """The SUS score (0..100) of one participant's answers (sus_1 .. sus_10), or None when an item is
    missing."""
    return sus_of_responses([answers.get(name) for name in SUS_NAMES])


SCORE_LABELS = {TLX_RAW: "Raw NASA-TLX (0-100)", SUS_SCORE: "SUS score (0-100)"}


def score_items(items: Sequence[Mapping]) -> list[dict]:
    """The instrument scores the items allow, as number items (name: the score key), so that a summary of
    numeric items (Table 1, the meta-evaluation's ratings) shows them beside the items."""
    return [
        {"name": key, "label": SCORE_LABELS[key], "kind": "number"} for key in instrument_score_keys(items)
    ]


def answers_with_scores(items: Sequence[Mapping], answers: Mapping | None) -> dict:
    """The answers and, under their score keys, the instrument scores they have (none where one is None)."""
    answers = dict(answers) if isinstance(answers, Mapping) else {}
    scores = instrument_scores(items, answers)
    return {**answers, **{key: value for key, value in scores.items() if value is not None}}
