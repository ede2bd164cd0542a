"""A questionnaire's answers as table columns: one column per item (its name), the text of a choice's "Other
(please specify)" in its own column (<name>.other), and the instrument scores the items allow (score.tlx_raw,
score.sus: studies/questionnaires/instruments.py). Used by the tidy CSV's answer tables (tidy_csv.py) and
meant for any other table that carries answers (a participants table's demographics): call
`questionnaire_columns` for the header and `answer_cells` for each row, with the same items and prefix.

Column names hold a dot where they are not an item's own (an item name cannot), so a prefix, an item and a
score never share a name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from studies.questionnaires.instruments import instrument_score_keys, instrument_scores
from studies.questionnaires.items import OTHER_SUFFIX


def questionnaire_columns(items: Sequence[Mapping], prefix: str = "") -> list[str]:
    """The header cells of `items`' answers, each name after `prefix` (e.g. "post_task.")."""
    columns = []
    for item in items:
        columns.append(f"{prefix}{item['name']}")
        if item.get("other") is True:
            columns.append(f"{prefix}{item['name']}{OTHER_SUFFIX}")
    return columns + [f"{prefix}{key}" for key in instrument_score_keys(items)]


def _cell(value) -> object:
    if value is None or isinstance(value, dict | list):
        return ""  # unanswered; a nested value is no answer an item takes
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return round(value, 4)
    return value


def answer_cells(items: Sequence[Mapping], answers: Mapping | None) -> list:
    """One row's cells under questionnaire_columns(items): the answer ("" when none), the other text, the
    scores ("" when an item of the instrument is unanswered)."""
    answers = answers if isinstance(answers, Mapping) else {}
    cells = []
    for item in items:
        cells.append(_cell(answers.get(item["name"])))
        if item.get("other") is True:
            cells.append(_cell(answers.get(f"{item['name']}{OTHER_SUFFIX}")))
    scores = instrument_scores(items, answers)
    return cells + [_cell(scores[key]) for key in instrument_score_keys(items)]
