"""A questionnaire's answers checked against its items (studies/questionnaires/items.py): what the
participant's pages, the API, the simulated searchers and the set-up page's preview all accept."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from studies.errors import InvalidAnswers
from studies.questionnaires.items import OTHER, OTHER_SUFFIX

_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(value: str) -> str:
    """A text as it can be stored: no NUL (PostgreSQL's jsonb refuses it), lone surrogates as U+FFFD (the
    rule of studies/participation/event_checks.text_clean, which sits above this module)."""
    return _SURROGATE.sub("\ufffd", value.replace("\x00", ""))


def answers_clean(items: Sequence[Mapping], data: Mapping[str, Any]) -> dict[str, Any]:
    """Answers checked against the items ({"name", "label", "kind": integer|scale|number|text|choice, "min",
    "max", "choices", "required" (default true)}); raises InvalidAnswers({name: message})."""
    cleaned: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for item in items:
        name = item["name"]
        raw = data.get(name, "")
        raw = "" if raw is None else str(raw).strip()
        if raw == "":
            if item.get("required", True):
                errors[name] = "Please answer this question."
            cleaned[name] = None
            continue
        try:
            cleaned.update(_answer(item, raw, data))
        except _Refused as refused:
            errors[name] = str(refused)
    if errors:
        raise InvalidAnswers(errors)
    return cleaned


class _Refused(ValueError):
    """One answer's message to the participant."""


def _answer(item: Mapping, raw: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """The stored key(s) and value(s) of one non-empty answer; raises _Refused."""
    name, kind = item["name"], item.get("kind", "text")
    if kind in ("integer", "scale", "number"):
        return {name: _number_answer(item, kind, raw)}
    if kind == "choice":
        return _choice_answer(item, raw, data)
    return {name: _text(raw[:2000])}  # a NUL cannot be stored (PostgreSQL's jsonb)


def _number_answer(item: Mapping, kind: str, raw: str) -> int | float:
    try:
        value = int(raw) if kind != "number" else float(raw)
        if not math.isfinite(value):  # "nan", "1e999": JSON cannot hold them
            raise ValueError(raw)
    except ValueError:
        raise _Refused(
            "Please give a number." if kind == "number" else "Please give a whole number."
        ) from None
    low, high = item.get("min"), item.get("max")
    if (low is not None and value < low) or (high is not None and value > high):
        raise _Refused(f"Please give a number from {low} to {high}.")
    return value


def _choice_answer(item: Mapping, raw: str, data: Mapping[str, Any]) -> dict[str, Any]:
    name = item["name"]
    if item.get("other") is True and raw == OTHER:
        # "Other (please specify)": the text goes in its own key (and column), never in the choice's.
        text = data.get(f"{name}{OTHER_SUFFIX}", "")
        text = "" if text is None else str(text).strip()
        if not text:
            raise _Refused("Please say what you mean by other.")
        return {name: OTHER, f"{name}{OTHER_SUFFIX}": _text(text[:500])}
    if raw not in [str(c) for c in item.get("choices", [])]:
        raise _Refused("Please pick one of the options.")
    return {name: raw}
