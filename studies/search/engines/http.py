"""A researcher's own search engine behind HTTP, used as a study's search system.

The engine is called with a GET on a URL template and answers JSON (see docs/collections-and-systems.md).
Whatever goes wrong (timeout, refused connection, HTTP error, bad JSON, wrong shape) the participant gets a
SearchPage with no results and a plain message; `search` never raises. Standard library only.
"""

from __future__ import annotations

import json
import math
import string
import time
import urllib.error
import urllib.parse
import urllib.request

from studies.search.engines.search import Hit, SearchPage, highlights_checked

__all__ = ["HttpSearchSystem", "parse_response"]

PLACEHOLDERS = frozenset({"query", "page", "page_size"})
MAX_RESPONSE_BYTES = 5_000_000
UNAVAILABLE = "The search system is not available right now. Please try again in a moment."


class _BadResponse(ValueError):
    pass


class HttpSearchSystem:
    """`url_template` is an http(s) URL with `{query}` (URL-encoded for you) and optionally `{page}` and
    `{page_size}`, e.g. "http://engine.example:8000/search?q={query}&p={page}&n={page_size}". Literal braces
    must be doubled. `timeout` (seconds) bounds the whole request, connection and reading included."""

    def __init__(self, url_template: str, timeout: float = 5.0):
        names = set()
        try:
            for _literal, name, spec, conversion in string.Formatter().parse(url_template):
                if name is not None:
                    if name not in PLACEHOLDERS or spec or conversion:
                        raise ValueError(
                            f"unknown placeholder {{{name}}} in the URL template "
                            f"(allowed: {{query}}, {{page}}, {{page_size}})"
                        )
                    names.add(name)
        except ValueError as exc:
            raise ValueError(f"bad URL template {url_template!r}: {exc}") from None
        if "query" not in names:
            raise ValueError(f"URL template {url_template!r} has no {{query}} placeholder")
        if urllib.parse.urlsplit(url_template.format(query="q", page=1, page_size=10)).scheme not in (
            "http",
            "https",
        ):
            raise ValueError(f"URL template {url_template!r} is not an http:// or https:// URL")
        if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        self.url_template = url_template
        self.timeout = float(timeout)

    def url_for(self, query_text: str, page: int = 1, page_size: int = 10) -> str:
        return self.url_template.format(
            query=urllib.parse.quote(query_text, safe=""), page=page, page_size=page_size
        )

    def search(self, query_text: str, page: int = 1, page_size: int = 10) -> SearchPage:
        if page < 1 or page_size < 1:
            raise ValueError("page and page_size must be >= 1")

        def failed(detail: str) -> SearchPage:
            return SearchPage([], None, page, UNAVAILABLE, detail, page_size)

        url = self.url_for(query_text, page, page_size)
        deadline = time.monotonic() + self.timeout
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                status = response.status
                if status != 200:
                    return failed(f"HTTP status {status} from {url}")
                body = bytearray()
                while True:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise TimeoutError("timed out while reading the response")
                    chunk = response.read1(65536)
                    if not chunk:
                        break
                    body += chunk
                    if len(body) > MAX_RESPONSE_BYTES:
                        return failed(f"response from {url} is larger than {MAX_RESPONSE_BYTES} bytes")
        except urllib.error.HTTPError as exc:
            return failed(f"HTTP status {exc.code} from {url}")
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                return failed(f"no answer from {url} within {self.timeout:g} s")
            return failed(f"cannot connect to {url}: {reason}")
        except TimeoutError:
            return failed(f"no answer from {url} within {self.timeout:g} s")
        except (OSError, ValueError) as exc:  # reset connections, bad status lines, invalid URLs
            return failed(f"request to {url} failed: {exc}")
        try:
            results, total = parse_response(bytes(body), page, page_size)
        except _BadResponse as exc:
            return failed(f"bad response from {url}: {exc}")
        return SearchPage(results, total, page, None, None, page_size)


def parse_response(body: bytes, page: int = 1, page_size: int = 10) -> tuple[list[Hit], int | None]:
    """The engine's JSON (an object with "results" and optional "total", or a bare list of results) as hits
    with absolute ranks. Results beyond page_size are dropped. Raises _BadResponse (a ValueError)."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _BadResponse(f"not valid JSON ({exc})") from None
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
    hits = []
    seen: set[str] = set()
    for position, item in enumerate(items[:page_size]):
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
        hits.append(
            Hit(
                doc_id,
                (page - 1) * page_size + position + 1,
                None if score is None else float(score),
                values["title"] or "",
                values["snippet"] or "",
                highlights_checked(item.get("highlights"), values["snippet"] or ""),
                values["url"],
            )
        )
    return hits, total
