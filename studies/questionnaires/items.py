"""What a questionnaire item may be (docs/running-a-study.md), checked where a questionnaire comes in (the
API, the admin, the archive importer) and again where one is shown, so that a malformed one never reaches a
participant's page as a 500.

An item: {"name", "label", "kind": integer|number|scale|text|choice, "min", "max", "choices", "required",
"min_label", "max_label" (a scale's anchors, shown at its two ends), "other" (a choice item's "Other (please
specify)": the answer is "other" and the text goes under "<name>.other"), "new_page" (the participant sees the
items from this one on a new page)}.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

KINDS = ("integer", "number", "scale", "text", "choice")
KEYS = {
    "name",
    "label",
    "kind",
    "min",
    "max",
    "choices",
    "required",
    "min_label",
    "max_label",
    "other",
    "new_page",
}
# A choice item's "Other (please specify)": its answer, and the key of its text in the answers.
OTHER = "other"
OTHER_SUFFIX = ".other"
MAX_ITEMS = 100
MAX_OPTIONS = 100  # radio buttons of a scale (max - min + 1) or a choice
MAX_LABEL = 1000
MAX_CHOICE = 200
# A form field name and an answer key: letters, digits and _, not starting with a digit.
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def _is_number(value: Any, *, whole: bool) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) < 2**53
    return not whole and isinstance(value, float) and math.isfinite(value)


def _is_choice(value: Any) -> bool:
    return (isinstance(value, str) and 0 < len(value.strip()) and len(value) <= MAX_CHOICE) or _is_number(
        value, whole=True
    )


def item_errors(item: Any) -> list[str]:
    """What is wrong with one item (empty: nothing)."""
    if not isinstance(item, dict):
        return ["must be an object with name, label and kind"]
    errors = _identity_errors(item)
    kind = item.get("kind", "text")
    if kind not in KINDS:
        return [*errors, f"kind must be one of {', '.join(KINDS)}"]
    errors += _flag_errors(item, kind)
    if kind in ("integer", "number", "scale"):
        number_errors = _number_errors(item, kind)
        if errors or number_errors:  # a range is checked only once its bounds are numbers
            return errors + number_errors
        errors += _range_errors(item, kind)
    elif item.get("min") is not None or item.get("max") is not None:
        errors.append(f"min and max are for integer, number and scale items, not {kind}")
    return errors + _choice_errors(item, kind)


def _identity_errors(item: dict) -> list[str]:
    errors = []
    unknown = sorted(str(k) for k in item if k not in KEYS)
    if unknown:
        errors.append(f"unknown key(s) {', '.join(unknown)}; an item has {', '.join(sorted(KEYS))}")
    name = item.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        errors.append("name must be 1-64 letters, digits or _, not starting with a digit")
    label = item.get("label")
    if not isinstance(label, str) or not label.strip() or len(label) > MAX_LABEL:
        errors.append(f"label must be a text of 1-{MAX_LABEL} characters")
    return errors


def _flag_errors(item: dict, kind: str) -> list[str]:
    errors = [
        f"{flag} must be true or false"
        for flag in ("required", "new_page", "other")
        if flag in item and not isinstance(item[flag], bool)
    ]
    for anchor in ("min_label", "max_label"):
        if anchor in item:
            text = item[anchor]
            if kind != "scale":
                errors.append(f"{anchor} is for scale items, not {kind}")
            elif not isinstance(text, str) or not text.strip() or len(text) > MAX_CHOICE:
                errors.append(f"{anchor} must be a text of 1-{MAX_CHOICE} characters")
    if item.get("other") is True and kind != "choice":
        errors.append(f"other (please specify) is for choice items, not {kind}")
    return errors


def _number_errors(item: dict, kind: str) -> list[str]:
    whole = kind != "number"
    return [
        f"{key} must be a {'whole ' if whole else ''}number"
        for key in ("min", "max")
        if item.get(key) is not None and not _is_number(item.get(key), whole=whole)
    ]


def _range_errors(item: dict, kind: str) -> list[str]:
    low, high = item.get("min"), item.get("max")
    if kind == "scale" and (low is None or high is None):
        return ["a scale needs min and max"]
    if low is not None and high is not None and low > high:
        return ["min must not be above max"]
    if kind == "scale" and low is not None and high is not None and high - low + 1 > MAX_OPTIONS:
        return [f"a scale has at most {MAX_OPTIONS} steps"]
    return []


def _choice_errors(item: dict, kind: str) -> list[str]:
    choices = item.get("choices")
    if kind != "choice":
        return [] if choices is None else [f"choices are for choice items, not {kind}"]
    if (
        not isinstance(choices, list)
        or not 1 <= len(choices) <= MAX_OPTIONS
        or not all(map(_is_choice, choices))
    ):
        return [
            f"choices must be a list of 1-{MAX_OPTIONS} texts of 1-{MAX_CHOICE} characters or whole numbers"
        ]
    if len({str(c) for c in choices}) != len(choices):
        return ["choices must differ from one another"]
    if item.get("other") is True and any(str(c).strip().lower() == OTHER for c in choices):
        return [f'choices must not include "{OTHER}" when "other (please specify)" is on: it adds it']
    return []


def questionnaire_errors(items: Any) -> list[str]:
    """Every problem of a questionnaire, each naming its item ("item 2 (role): ..."); empty when it is
    valid."""
    if not isinstance(items, list):
        return ["must be a list of items"]
    if len(items) > MAX_ITEMS:
        return [f"has {len(items)} items; at most {MAX_ITEMS}"]
    errors, seen = [], set()
    for number, item in enumerate(items, start=1):
        name = item.get("name") if isinstance(item, dict) else None
        where = f"item {number}" + (f" ({name})" if isinstance(name, str) and len(name) <= 64 else "")
        errors += [f"{where}: {problem}" for problem in item_errors(item)]
        if isinstance(name, str):
            if name in seen:
                errors.append(f"{where}: the name is used by an earlier item")
            seen.add(name)
    return errors


def usable_items(items: Any) -> list[dict]:
    """The valid items of a stored questionnaire, in order (a name used twice: the first). What a page shows
    when something malformed was stored before these checks existed, or by a path that skipped them."""
    if not isinstance(items, Sequence) or isinstance(items, str | bytes):
        return []
    usable, seen = [], set()
    for item in items:
        if not item_errors(item) and item["name"] not in seen:
            usable.append(item)
            seen.add(item["name"])
    return usable


# The paper's Table 1 (Järvelin et al. 2008, section 3.1), used when a study defines no questionnaire.
DEFAULT_QUESTIONNAIRE = [
    {
        "name": "search_engine_years",
        "label": "Experience using Internet search engines (years)",
        "kind": "integer",
        "min": 0,
        "max": 80,
    },
    {
        "name": "domain_years",
        "label": "Professional experience in the domain (years)",
        "kind": "integer",
        "min": 0,
        "max": 80,
    },
    {
        "name": "search_skill",
        "label": "Your searching skill (1 = low, 5 = high)",
        "kind": "scale",
        "min": 1,
        "max": 5,
    },
]
DEFAULT_POST_TASK_QUESTIONNAIRE = [
    {
        "name": "search_went_well",
        "label": "How well did this search go? (1 = very badly, 5 = very well)",
        "kind": "scale",
        "min": 1,
        "max": 5,
    },
]


def item_pages(items: Sequence[dict]) -> list[list[dict]]:
    """The items page by page: a new page starts at each item with "new_page" (but the first)."""
    pages: list[list[dict]] = []
    for item in items:
        if not pages or (item.get("new_page") and pages[-1]):
            pages.append([])
        pages[-1].append(item)
    return pages


def questionnaire_shown(study, which: str) -> list[dict]:
    """The items participants are asked by the study's questionnaire `which` (questionnaire,
    pre_task_questionnaire, post_task_questionnaire): its valid items, else the default (none before each
    task)."""
    items = usable_items(getattr(study, which, None))
    if items or which == "pre_task_questionnaire":
        return items
    return DEFAULT_POST_TASK_QUESTIONNAIRE if which == "post_task_questionnaire" else DEFAULT_QUESTIONNAIRE
