"""A questionnaire's answers checked against its items (studies/design/questionnaires.py): what the
participant's pages, the API, the simulated searchers and the set-up page's preview all accept."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from studies.design.questionnaires import OTHER, OTHER_SUFFIX
from studies.errors import InvalidAnswers

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
        name, kind = item["name"], item.get("kind", "text")
        raw = data.get(name, "")
        raw = "" if raw is None else str(raw).strip()
        if raw == "":
            if item.get("required", True):
                errors[name] = "Please answer this question."
            cleaned[name] = None
            continue
        if kind in ("integer", "scale", "number"):
            try:
                value = int(raw) if kind != "number" else float(raw)
                if not math.isfinite(value):  # "nan", "1e999": JSON cannot hold them
                    raise ValueError(raw)
            except ValueError:
                errors[name] = "Please give a number." if kind == "number" else "Please give a whole number."
                continue
            low, high = item.get("min"), item.get("max")
            if (low is not None and value < low) or (high is not None and value > high):
                errors[name] = f"Please give a number from {low} to {high}."
                continue
            cleaned[name] = value
        elif kind == "choice":
            choices = [str(c) for c in item.get("choices", [])]
            if item.get("other") is True and raw == OTHER:
                # "Other (please specify)": the text goes in its own key (and column), never in the choice's.
                text = data.get(f"{name}{OTHER_SUFFIX}", "")
                text = "" if text is None else str(text).strip()
                if not text:
                    errors[name] = "Please say what you mean by other."
                    continue
                cleaned[name] = OTHER
                cleaned[f"{name}{OTHER_SUFFIX}"] = _text(text[:500])
                continue
            if raw not in choices:
                errors[name] = "Please pick one of the options."
                continue
            cleaned[name] = raw
        else:
            cleaned[name] = _text(raw[:2000])  # a NUL cannot be stored (PostgreSQL's jsonb)
    if errors:
        raise InvalidAnswers(errors)
    return cleaned
