"""Reader for session logs in JSON Lines: one session a line,

    {"id": ..., "system": ..., "scenario": ..., "participant": ...,
     "queries": [{"text": ..., "results": ["doc", ...], "scanned_to": 7}, ...]}

`scenario` is the qrels topic; `scanned_to` (optional) is the deepest rank the participant viewed, used by
`--scan observed`. The whole file is read and checked before anything is returned, so a bad line means no
partial result: InputError names the file and line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError


@dataclass(frozen=True)
class QueryRecord:
    text: str | None
    results: tuple[str, ...]
    scanned_to: int | None


@dataclass(frozen=True)
class SessionRecord:
    line: int
    id: str | int
    system: str | int | None
    scenario: str
    participant: str | int | None
    queries: tuple[QueryRecord, ...]


def parse_session_lines(lines, path: str = "<sessions>") -> list[SessionRecord]:
    sessions: list[SessionRecord] = []
    first_line_of: dict[str | int, int] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(path, number, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
        record = _session(data, number, lambda reason, n=number: InputError(path, n, reason))
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
        line=line,
        id=data["id"],
        system=data.get("system"),
        scenario=str(data["scenario"]),
        participant=data.get("participant"),
        queries=tuple(_query(query, number, error) for number, query in enumerate(queries, start=1)),
    )


def _query(data, number: int, error) -> QueryRecord:
    where = f"query {number}"
    if not isinstance(data, dict):
        raise error(f"{where}: expected a JSON object, found {type(data).__name__}")
    if "results" not in data:
        raise error(f'{where}: missing "results"')
    results = data["results"]
    if not isinstance(results, list) or not all(isinstance(doc, str) and doc for doc in results):
        raise error(f'{where}: "results" must be a list of document id strings')
    if len(set(results)) != len(results):
        repeated = next(doc for doc in results if results.count(doc) > 1)
        raise error(f"{where}: document {repeated!r} appears twice in one result list")
    text = data.get("text")
    if text is not None and not isinstance(text, str):
        raise error(f'{where}: "text" must be a string')
    scanned_to = data.get("scanned_to")
    if scanned_to is not None and (not isinstance(scanned_to, int) or isinstance(scanned_to, bool) or scanned_to < 0):
        raise error(f'{where}: "scanned_to" must be a whole number >= 0, found {scanned_to!r}')
    return QueryRecord(text=text, results=tuple(results), scanned_to=scanned_to)
