"""A TREC Session Track log as read (the package docstring gives its layout): the elements with their lines,
each time as written, and the constants the reader, the import and the export share."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Literal, overload

from studies.interchange import ImportFailure

# The TREC 2012 Web/Session Track relevance levels, 0..4 (-2, spam, is kept: see the package docstring).
TRACK_GRADE_LABELS = ("not relevant", "relevant", "highly relevant", "key", "navigational")
NEGATIVE_GRADES = ("keep", "clip", "drop", "refuse")
DOC_ID_TAGS = ("clueweb09id", "clueweb12id", "docno")
DEFAULT_DAY = dt.date(2012, 1, 1)
EVENT_PREFIX = "st."


@dataclass
class Node:
    tag: str
    attrs: dict
    line: int
    children: list[Node] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The element's text as written: leading and trailing whitespace is part of a query or a title."""
        return "".join(self.parts)

    def all(self, tag: str) -> list[Node]:
        return [child for child in self.children if child.tag == tag]

    @overload
    def one(self, tag: str, path: str, required: Literal[True] = ...) -> Node: ...
    @overload
    def one(self, tag: str, path: str, required: bool) -> Node | None: ...
    def one(self, tag: str, path: str, required: bool = True) -> Node | None:
        found = self.all(tag)
        if len(found) > 1:
            raise ImportFailure(path, found[1].line, tag, f"<{self.tag}> has more than one <{tag}>")
        if not found and required:
            raise ImportFailure(path, self.line, tag, f"<{self.tag}> has no <{tag}>")
        return found[0] if found else None


@dataclass(frozen=True)
class Stamp:
    """A time as the log wrote it (`raw`, written back as read) and what it means: a time of day (2011-2012),
    seconds from the session's start (2013-2014), or neither ("NA": not recorded)."""

    raw: str
    clock: dt.time | None = None
    seconds: float | None = None

    @property
    def notation(self) -> str | None:
        return "clock" if self.clock is not None else "seconds" if self.seconds is not None else None


@dataclass
class Click:
    num: int
    start: Stamp
    end: Stamp
    rank: int
    line: int
    attrs: dict = field(default_factory=dict)  # attributes other than num, starttime, endtime
    extra: list = field(default_factory=list)  # (tag, text) of children other than <rank> (e.g. <docno>)


@dataclass
class Result:
    rank: int
    url: str
    docid: str
    title: str
    snippet: str
    line: int


@dataclass
class Interaction:
    num: int
    start: Stamp
    query: str
    results: list[Result]
    clicks: list[Click]
    line: int
    attrs: dict = field(default_factory=dict)  # attributes other than num and starttime (e.g. 2014's type)


@dataclass
class Topic:
    num: str
    attrs: dict  # the <topic> attributes other than num (product, goal, tasktype)
    subject: str | None
    subject_num: str | None
    desc: str
    narr: str | None


@dataclass
class LogSession:
    num: int
    start: Stamp | None
    topic: Topic
    interactions: list[Interaction]
    current_query: tuple[str, Stamp | None] | None
    line: int
    attrs: dict = field(default_factory=dict)  # attributes other than num and starttime (e.g. userid)


@dataclass
class Log:
    root: str
    id_tag: str
    sessions: list[LogSession]
    notation: str = "clock"  # "clock" (times of day) or "seconds" (from the session's start)
