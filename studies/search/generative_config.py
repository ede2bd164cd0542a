"""A generative system's settings and the one rule that checks them (docs/generative-systems.md), apart from
studies.search.generative so that studies.search.systems' system_config_problem may ask it."""

from __future__ import annotations

import math
import urllib.parse

from studies.search.engines.answers import DEFAULT_PROMPT, AnswerRefused, prompt_check

ANSWERERS = ("extractive", "rag", "service")
SETTINGS = {
    "extractive": {"answerer", "retrieval", "k", "passage_chars"},
    "rag": {
        "answerer",
        "retrieval",
        "k",
        "passage_chars",
        "endpoint_url",
        "model",
        "temperature",
        "max_tokens",
        "prompt_template",
        "timeout",
    },
    "service": {"answerer", "url", "k", "timeout"},
}
# name -> (least, most, default)
BOUNDS: dict[str, tuple[float, float, float]] = {
    "k": (1, 10, 5),  # at most the first page of results (systems.PAGE_SIZE)
    "passage_chars": (100, 4000, 600),
    "temperature": (0.0, 2.0, 0.0),
    "max_tokens": (16, 4000, 400),
    "timeout": (1, 30, 20),  # seconds: a participant is waiting, and so is a web worker
}
PROMPT_MAX_CHARS = 20_000
HISTORY_TURNS = 5  # earlier turns given to a model or a service


def setting(config: dict, name: str):
    return config.get(name, BOUNDS[name][2])


def _url_problem(url, name: str) -> str | None:
    if not isinstance(url, str) or not url:
        return f"{name}: give an http or https URL"
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{name}: {url!r} is not an http or https URL"
    if parts.username or parts.password:
        return f"{name}: put the API key in its own field, not in the URL"
    if "?" in url or "#" in url:
        return f"{name}: a URL without a query (?) or fragment (#)"
    return None


def _bounds_problem(config: dict) -> str | None:
    for name in sorted(set(config) & set(BOUNDS)):
        least, most, _default = BOUNDS[name]
        value = config[name]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return f"{name} must be a number from {least:g} to {most:g}"
        if not least <= value <= most:
            return f"{name} must be from {least:g} to {most:g} (not {value:g})"
    return None


def _rag_problem(config: dict) -> str | None:
    problem = _url_problem(config.get("endpoint_url"), "endpoint_url")
    if problem:
        return problem
    model = config.get("model")
    if not isinstance(model, str) or not model.strip() or len(model) > 200:
        return "model: name the model the endpoint serves, e.g. llama3.1:8b"
    template = config.get("prompt_template", DEFAULT_PROMPT)
    if not isinstance(template, str) or len(template) > PROMPT_MAX_CHARS:
        return f"prompt_template must be a text of at most {PROMPT_MAX_CHARS} characters"
    try:
        prompt_check(template)
    except AnswerRefused as error:
        return f"prompt_template: {error.category}"
    return None


def generative_config_problem(config: dict) -> str | None:
    """Why a generative system's config cannot work (None: it can). Called by studies.search.systems'
    system_config_problem, the one rule every way in asks."""
    answerer = config.get("answerer", "extractive")
    if answerer not in ANSWERERS:
        return f"answerer must be one of {', '.join(ANSWERERS)} (not {answerer!r})"
    unknown = sorted(set(config) - SETTINGS[answerer])
    if unknown:
        return f"unknown setting(s) {', '.join(unknown)} for the {answerer} answerer"
    problem = _bounds_problem(config)
    if problem:
        return problem
    if answerer == "service":
        return _url_problem(config.get("url"), "url")
    retrieval = config.get("retrieval")
    if not isinstance(retrieval, str) or not retrieval.strip():
        return "retrieval: name the code of the study's search system that finds the passages"
    if answerer == "rag":
        return _rag_problem(config)
    return None
