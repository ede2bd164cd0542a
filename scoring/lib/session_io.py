"""Reader for session logs in JSON Lines: one session a line,

    {"id": ..., "system": ..., "scenario": ..., "participant": ...,
     "queries": [{"text": ..., "results": ["doc", ...], "scanned_to": 7}, ...]}

`scenario` is the qrels topic; `scanned_to` (optional) is the deepest rank the participant viewed, used by
`--scan observed`. The whole file is read and checked before anything is returned, so a bad line means no
partial result: InputError names the file and line.

Speed (docs/scoring-sessions.md, "The JSONL path"): a line is parsed by orjson when it is installed,
and by the standard library when orjson refuses it or what it gives does not pass the checks, so what is
accepted, the values and every error message are the standard library's: orjson refuses NaN, Infinity,
1E400 and lone surrogates, which `json` takes, and turns an integer beyond 64 bits into a float, which the
checks of a label or a `scanned_to` refuse. The records are named tuples, a result list is checked by C
loops (its types as a set, "" in it, its length as a set), and the garbage collector is paused meanwhile.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from .errors import InputError

try:
    from orjson import loads as _fast_loads
except ImportError:  # the library runs without it, at the standard library's speed
    _fast_loads = json.loads  # type: ignore[assignment]  # orjson's loads takes fewer options; both take bytes


class QueryRecord(NamedTuple):
    text: str | None
    results: tuple[str, ...]
    scanned_to: int | None


class SessionRecord(NamedTuple):
    line: int
    id: str | int
    system: str | int | None
    scenario: str
    participant: str | int | None
    queries: tuple[QueryRecord, ...]


_STRINGS = frozenset({str})


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off for a block that builds millions of containers none of which can be
    in a cycle (parsed JSON, records, lists of lists): each collection would walk the whole growing heap,
    which took 70% of reading a large log. Reference counting still frees everything; the collector's state
    is restored on the way out."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_session_lines(lines, path: str = "<sessions>") -> list[SessionRecord]:
    with gc_paused():
        return _parse_session_lines(lines, path)


def _parse_session_lines(lines, path: str) -> list[SessionRecord]:
    sessions: list[SessionRecord] = []
    first_line_of: dict[str | int, int] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        error = _error_at(path, number)
        try:
            record = _session(_fast_loads(raw), number, error)
        except ValueError:  # orjson's JSONDecodeError and InputError both are
            # The standard library decides, and words the error (see the module's docstring).
            try:
                data = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(path, number, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
            record = _session(data, number, error)
        if earlier := first_line_of.get(record.id):
            raise InputError(path, number, f"session id {record.id!r} was already used on line {earlier}")
        first_line_of[record.id] = number
        sessions.append(record)
    return sessions


def read_sessions(path: str | Path) -> list[SessionRecord]:
    """Read a sessions JSONL file; raises InputError naming file and line."""
    try:
        with open(path, encoding="utf-8") as handle:
            return parse_session_lines(handle, str(path))
    except OSError as exc:
        raise InputError(str(path), None, f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(path), None, f"not UTF-8 text ({exc.reason})") from None


def _error_at(path: str, number: int):
    return lambda reason: InputError(path, number, reason)


def _is_label(value) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _session(data, line: int, error) -> SessionRecord:
    if not isinstance(data, dict):
        raise error(f"expected a JSON object, found {type(data).__name__}")
    for key in ("id", "scenario", "queries"):
        if key not in data:
            raise error(f'missing "{key}"')
    for key in ("id", "scenario"):
        if not _is_label(data[key]) or data[key] == "":
            raise error(f'"{key}" must be a non-empty string or an integer, found {data[key]!r}')
    for key in ("system", "participant"):
        if data.get(key) is not None and not _is_label(data[key]):
            raise error(f'"{key}" must be a string or an integer, found {data[key]!r}')
    queries = data["queries"]
    if not isinstance(queries, list) or not queries:
        raise error('"queries" must be a non-empty list (a session has at least one query)')
    return SessionRecord(
        line,
        data["id"],
        data.get("system"),
        str(data["scenario"]),
        data.get("participant"),
        tuple([_query(query, number, error) for number, query in enumerate(queries, start=1)]),
    )


def _query(data, number: int, error) -> QueryRecord:
    if not isinstance(data, dict):
        raise error(f"query {number}: expected a JSON object, found {type(data).__name__}")
    if "results" not in data:
        raise error(f'query {number}: missing "results"')
    results = data["results"]
    # JSON gives exact types: every item's type is str, and none is empty.
    if not isinstance(results, list) or not _STRINGS.issuperset(map(type, results)) or "" in results:
        raise error(f'query {number}: "results" must be a list of document id strings')
    if len(set(results)) != len(results):
        repeated = next(doc for doc in results if results.count(doc) > 1)
        raise error(f"query {number}: document {repeated!r} appears twice in one result list")
    text = data.get("text")
    if text is not None and not isinstance(text, str):
        raise error(f'query {number}: "text" must be a string')
    scanned_to = data.get("scanned_to")
    if scanned_to is not None and (
        not isinstance(scanned_to, int) or isinstance(scanned_to, bool) or scanned_to < 0
    ):
        raise error(f'query {number}: "scanned_to" must be a whole number >= 0, found {scanned_to!r}')
    return QueryRecord(text, tuple(results), scanned_to)
