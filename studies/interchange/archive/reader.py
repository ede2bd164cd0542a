"""Typed access to an archive's objects while it is imported, and what the sections imported so far: every
complaint names the file, the line of the object and the field (a JSON path such as `$.audit[3].at`)."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NoReturn

from django.utils.dateparse import parse_datetime

from studies.interchange import ImportFailure
from studies.interchange.archive.streamed_json import StreamedList
from studies.models import Scenario, Study, System, reference_grade_allowed


class ArchiveReader:
    """Typed access to the archive's objects; every complaint names file, line and JSON path."""

    def __init__(self, path: str):
        self.path = path
        self.notes: list[str] = []  # what was kept but changed (a client time kept as text), by file and line

    def fail(self, obj, where: str, reason: str) -> NoReturn:
        raise ImportFailure(self.path, getattr(obj, "line", None), where, reason)

    def obj(self, value, where: str, parent=None) -> dict:
        if not isinstance(value, dict):
            self.fail(parent, where, "expected an object")
        return value

    def list(self, obj, key: str, where: str) -> list | StreamedList:
        value = obj.get(key) if isinstance(obj, dict) else None
        if not isinstance(value, list | StreamedList):
            self.fail(obj, f"{where}.{key}", "expected a list")
        return value

    def items(self, parent, key: str, where: str, *, optional: bool = False) -> Iterator[tuple[dict, str]]:
        """The objects listed at `parent[key]`, each with its JSON path (`$.audit[3]`): a value that is no
        list, or an item that is no object, is refused there. `optional`: an absent key lists nothing."""
        if optional and key not in parent:
            return
        for i, item in enumerate(self.list(parent, key, where)):
            item_where = f"{where}.{key}[{i}]"
            self.obj(item, item_where, parent)
            yield item, item_where

    def once(self, seen: set, value, obj, where: str, reason: str, *, allowed: bool = True) -> None:
        """Remember `value` among those a list gave so far; a repeat (or a value not `allowed`) is refused
        at `where` with `reason`."""
        if not allowed or value in seen:
            self.fail(obj, where, reason)
        seen.add(value)

    def get(self, obj, key: str, where: str, kind, *, null: bool = False, default=...):
        if key not in obj:
            if default is not ...:
                return default
            self.fail(obj, f"{where}.{key}", "missing")
        value = obj[key]
        if value is None and null:
            return None
        if kind == "time":
            moment = parse_datetime(value) if isinstance(value, str) else None
            if moment is None:
                self.fail(obj, f"{where}.{key}", f"{value!r} is not an ISO 8601 date and time")
            try:  # PostgreSQL would store it, and every later read of the row would fail
                (moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)
            except OverflowError:
                self.fail(obj, f"{where}.{key}", f"{value!r} is outside years 1-9999 in UTC")
            return moment
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            self.fail(obj, f"{where}.{key}", f"{value!r} is not an integer")
        if kind is not int and not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            self.fail(obj, f"{where}.{key}", f"{value!r} is not of type {names}")
        return value

    def milliseconds(self, item, key: str, where: str) -> float | None:
        """A session's clock figure (docs/time-model.md): a finite number of milliseconds, or null (older
        archives have none: the client's times are then taken as they are)."""
        value = self.get(item, key, where, (int, float), null=True, default=None)
        if value is not None and (isinstance(value, bool) or not math.isfinite(value) or abs(value) > 1e12):
            self.fail(item, f"{where}.{key}", f"{value!r} is not a number of milliseconds")
        return None if value is None else float(value)


@dataclass
class Imported:
    """What the sections imported so far, by the names the archive gives them (codes, document ids), and the
    exporting server's row ids mapped to the new rows' (for the raw event payloads). Documents are kept by
    their row id only: their text is not held while the rest of the archive is read."""

    r: ArchiveReader
    study: Study
    scale: set[int]
    documents: dict[str, int]
    scenarios: dict[str, Scenario] = field(default_factory=dict)
    systems: dict[str, System] = field(default_factory=dict)
    old_ids: dict[str, dict[int, int]] = field(
        default_factory=lambda: {"session": {}, "query": {}, "document": {}}
    )

    def document_of(self, obj, where: str) -> tuple[int, str]:
        """The row id of the document `obj.doc` names, and that name."""
        external_id = self.r.get(obj, "doc", where, str)
        if external_id not in self.documents:
            self.r.fail(obj, f"{where}.doc", f"document {external_id!r} is not in the archive's documents")
        return self.documents[external_id], external_id

    def grade_of(self, obj, where: str, *, reference: bool = False) -> int:
        grade = self.r.get(obj, "grade", where, int)
        scale = self.scale
        if not (reference_grade_allowed(grade, scale) if reference else grade in scale):
            self.r.fail(obj, f"{where}.grade", f"grade {grade} is not in the study's scale {sorted(scale)}")
        return grade
