"""A researcher's own search engine behind HTTP, used as a study's search system.

The engine is called with a GET on a URL template and answers JSON (see docs/collections-and-systems.md).
Here: the template and the reading of an answer, no I/O; the call itself goes through sessionlab.outbound
(studies.search.systems.http_search), the one home of outbound HTTP. A failure is a SearchPage with no
results, the plain participant message, a short category for the researcher ("HTTP 500", "not JSON", "wrong
shape"), never a value the engine sent, and `unavailable` set: the participant's query is asked again later.
"""

from __future__ import annotations

import json
import logging
import math
import string
import urllib.parse

from studies.search.engines.pyserini import candidate_as_result
from studies.search.engines.search import Hit, SearchPage, highlights_checked

__all__ = ["ANSWERS", "HttpSearchSystem", "parse_response", "pyserini_response", "unavailable_page"]

logger = logging.getLogger(__name__)

PLACEHOLDERS = frozenset({"query", "page", "page_size", "hits"})
# How an engine's answer is read: SessionLab's own shape ("results", one page), or Pyserini's REST server's
# ("candidates" from rank 1, engines/pyserini.py).
ANSWERS = ("sessionlab", "pyserini")
UNAVAILABLE = "The search system is not available right now. Please try again in a moment."


class _BadResponse(ValueError):
    category = "wrong shape"


class _NotJson(_BadResponse):
    category = "not JSON"


class HttpSearchSystem:
    """`url_template` is an http(s) URL with `{query}` (URL-encoded for you) and optionally `{page}` and
    `{page_size}`, e.g. "http://engine.example:8000/search?q={query}&p={page}&n={page_size}". Literal braces
    must be doubled. `{hits}` is page x page_size, for an engine that answers from rank 1 and does not page.
    `timeout` (seconds) bounds the whole call, connection and reading included (never more than the operator's
    OUTBOUND_DEADLINE_SECONDS). `answer` names the answer's shape (ANSWERS)."""

    def __init__(self, url_template: str, timeout: float = 5.0, answer: str = "sessionlab"):
        names = set()
        try:
            for _literal, name, spec, conversion in string.Formatter().parse(url_template):
                if name is not None:
                    if name not in PLACEHOLDERS or spec or conversion:
                        raise ValueError(
                            f"unknown placeholder {{{name}}} in the URL template "
                            f"(allowed: {{query}}, {{page}}, {{page_size}}, {{hits}})"
                        )
                    names.add(name)
        except ValueError as exc:
            raise ValueError(f"bad URL template {url_template!r}: {exc}") from None
        if "query" not in names:
            raise ValueError(f"URL template {url_template!r} has no {{query}} placeholder")
        if urllib.parse.urlsplit(
            url_template.format(query="q", page=1, page_size=10, hits=10)
        ).scheme not in (
            "http",
            "https",
        ):
            raise ValueError(f"URL template {url_template!r} is not an http:// or https:// URL")
        if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        if answer not in ANSWERS:
            raise ValueError(f"answer must be one of {', '.join(ANSWERS)}, not {answer!r}")
        self.url_template = url_template
        self.timeout = float(timeout)
        self.answer = answer

    def url_for(self, query_text: str, page: int = 1, page_size: int = 10) -> str:
        return self.url_template.format(
            query=urllib.parse.quote(query_text, safe=""),
            page=page,
            page_size=page_size,
            hits=page * page_size,
        )

    def page_from(self, status: int, body: bytes, page: int = 1, page_size: int = 10) -> SearchPage:
        """The SearchPage of an answer (status and body); the reason a bad answer is refused is logged, the
        page says only its category."""
        if status != 200:
            return unavailable_page(page, page_size, f"HTTP {status}")
        reader = pyserini_response if self.answer == "pyserini" else parse_response
        try:
            results, total = reader(body, page, page_size)
        except _BadResponse as exc:
            logger.warning("http system %s answered badly: %s", self.url_template, exc)
            return unavailable_page(page, page_size, exc.category)
        return SearchPage(results, total, page, None, None, page_size)


def unavailable_page(page: int, page_size: int, category: str) -> SearchPage:
    return SearchPage([], None, page, UNAVAILABLE, category, page_size, unavailable=True)


def _json(body: bytes):
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _NotJson(f"not valid JSON ({exc})") from None


def parse_response(body: bytes, page: int = 1, page_size: int = 10) -> tuple[list[Hit], int | None]:
    """The engine's JSON (an object with "results" and optional "total", or a bare list of results) as hits
    with absolute ranks. Results beyond page_size are dropped. Raises _BadResponse (a ValueError)."""
    data = _json(body)
    items, total = _results_and_total(data)
    hits = []
    seen: set[str] = set()
    for position, item in enumerate(items[:page_size]):
        hits.append(_hit_read(item, position, (page - 1) * page_size + position + 1, seen))
    return hits, total


def _results_and_total(data) -> tuple[list, int | None]:
    """The answer's list of results and its "total" (None when not given), each checked."""
    total = None
    if isinstance(data, dict):
        if "results" not in data:
            raise _BadResponse('JSON object without "results"')
        items = data["results"]
        total = data.get("total")
        if total is not None and (isinstance(total, bool) or not isinstance(total, int) or total < 0):
            raise _BadResponse(f'"total" must be a non-negative integer, not {total!r}')
    else:
        items = data
    if not isinstance(items, list):
        raise _BadResponse(f'"results" must be a list, not {type(items).__name__}')
    return items, total


def pyserini_response(body: bytes, page: int = 1, page_size: int = 10) -> tuple[list[Hit], int | None]:
    """Pyserini's REST answer ({"api", "index", "query": {"text"}, "candidates": [{"docid", "score", "rank",
    "doc"}]}, ranked from 1: the URL asked for page x page_size hits) as the page's hits, each candidate read
    as SessionLab's result (engines/pyserini.py). The total is known only when fewer hits came back than were
    asked for. Raises _BadResponse."""
    data = _json(body)
    if not isinstance(data, dict) or "candidates" not in data:
        raise _BadResponse('not a JSON object with "candidates"')
    candidates = data["candidates"]
    if not isinstance(candidates, list):
        raise _BadResponse(f'"candidates" must be a list, not {type(candidates).__name__}')
    first = (page - 1) * page_size
    hits: list[Hit] = []
    seen: set[str] = set()
    for position, candidate in enumerate(candidates[first : first + page_size]):
        try:
            item = candidate_as_result(candidate)
        except ValueError as exc:
            raise _BadResponse(f"candidate {first + position}: {exc}") from None
        hits.append(_hit_read(item, position, first + position + 1, seen))
    total = len(candidates) if len(candidates) < page * page_size else None
    return hits, total


def _hit_read(item, position: int, rank: int, seen: set[str]) -> Hit:
    """One result of the answer (at `position` on its page) as the hit at `rank`, its id added to `seen`;
    _BadResponse naming the position and the field when it is not an object with a usable id not seen
    before and well-typed fields."""
    if not isinstance(item, dict):
        raise _BadResponse(f"result {position} is not an object")
    raw_id = item.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or not str(raw_id).strip():
        raise _BadResponse(f'result {position} has no usable "id" ({raw_id!r})')
    doc_id = str(raw_id).strip()
    if doc_id in seen:
        raise _BadResponse(f"document {doc_id!r} appears twice in one page")
    seen.add(doc_id)
    values = {}
    for key in ("title", "snippet", "url"):
        value = item.get(key)
        if value is not None and not isinstance(value, str):
            raise _BadResponse(f'result {position}: "{key}" must be a string')
        values[key] = value
    if values["url"] is not None and urllib.parse.urlsplit(values["url"]).scheme not in ("http", "https"):
        raise _BadResponse(f'result {position}: "url" must be an http:// or https:// URL')
    score = item.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
        raise _BadResponse(f'result {position}: "score" must be a number')
    return Hit(
        doc_id,
        rank,
        None if score is None else float(score),
        values["title"] or "",
        values["snippet"] or "",
        highlights_checked(item.get("highlights"), values["snippet"] or ""),
        values["url"],
    )
