"""Reading a Session Track log: expat directly, so that every error names the file, the line and the element
or attribute; the whole log is read and checked before the import writes a row."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Literal, overload
from xml.parsers import expat

from studies.interchange import ImportFailure
from studies.interchange.session_track.log import (
    DOC_ID_TAGS,
    Click,
    Interaction,
    Log,
    LogSession,
    Node,
    Result,
    Stamp,
    Topic,
)


def parse_tree(data: bytes, path: str) -> Node:
    """The XML as Nodes with the line each element starts on; a syntax error names file and line."""
    parser = expat.ParserCreate()
    stack: list[Node] = []
    root: list[Node] = []

    def start(tag, attrs):
        node = Node(tag, attrs, parser.CurrentLineNumber)
        (stack[-1].children if stack else root).append(node)
        stack.append(node)

    def end(tag):
        stack.pop()

    def chars(text):
        if stack:
            stack[-1].parts.append(text)

    parser.StartElementHandler, parser.EndElementHandler, parser.CharacterDataHandler = start, end, chars
    try:
        parser.Parse(data, True)
    except expat.ExpatError as error:
        raise ImportFailure(
            path,
            error.lineno,
            None,
            f"not well-formed XML: {expat.errors.messages[error.code]} (column {error.offset + 1})",
        ) from None
    return root[0]


_NOTATION_NAMES = {"clock": "times of day", "seconds": "seconds from the session's start"}


def _int(node: Node, name: str, path: str, minimum: int = 1) -> int:
    raw = node.attrs.get(name) if name in node.attrs else None
    if raw is None:
        raise ImportFailure(path, node.line, f"{node.tag}@{name}", "missing")
    try:
        value = int(raw)
    except ValueError:
        raise ImportFailure(path, node.line, f"{node.tag}@{name}", f"{raw!r} is not an integer") from None
    if value < minimum:
        raise ImportFailure(path, node.line, f"{node.tag}@{name}", f"{value} is below {minimum}")
    return value


def _int_text(node: Node, path: str) -> int:
    try:
        value = int(node.text)
    except ValueError:
        raise ImportFailure(path, node.line, node.tag, f"{node.text!r} is not an integer") from None
    if value < 1:
        raise ImportFailure(path, node.line, node.tag, f"{value} is below 1")
    return value


_SECONDS = re.compile(r"[0-9]+(\.[0-9]+)?")


@overload
def _time(node: Node, name: str, path: str, required: Literal[True] = ...) -> Stamp: ...
@overload
def _time(node: Node, name: str, path: str, required: bool) -> Stamp | None: ...
def _time(node: Node, name: str, path: str, required: bool = True) -> Stamp | None:
    raw = node.attrs.get(name)
    if raw is None:
        if required:
            raise ImportFailure(path, node.line, f"{node.tag}@{name}", "missing")
        return None
    if raw == "NA":
        return Stamp(raw)
    if _SECONDS.fullmatch(raw):
        return Stamp(raw, seconds=float(raw))
    for pattern in ("%H:%M:%S.%f", "%H:%M:%S"):
        try:
            return Stamp(raw, clock=dt.datetime.strptime(raw, pattern).time())
        except ValueError:
            continue
    raise ImportFailure(
        path,
        node.line,
        f"{node.tag}@{name}",
        f"{raw!r} is not a time of day (HH:MM:SS.ffffff), "
        "seconds from the session's start (143.512957) or NA",
    )


def _others(node: Node, *known: str) -> dict:
    return {k: v for k, v in node.attrs.items() if k not in known}


@overload
def _text(node: Node, tag: str, path: str, required: Literal[True] = ...) -> str: ...
@overload
def _text(node: Node, tag: str, path: str, required: bool) -> str | None: ...
def _text(node: Node, tag: str, path: str, required: bool = True) -> str | None:
    child = node.one(tag, path, required)
    return None if child is None else child.text


class _LogReader:
    """The elements of one log, read in file order; it remembers the log's document id tag and its time
    notation (set by the first time written, which every other time must follow)."""

    def __init__(self, path: str):
        self.path = path
        self.id_tag: str | None = None
        self.notation: tuple[str, int] | None = None  # the log's time notation and the line that set it

    @overload
    def timed(self, node: Node, name: str, required: Literal[True] = ...) -> Stamp: ...
    @overload
    def timed(self, node: Node, name: str, required: bool) -> Stamp | None: ...
    def timed(self, node: Node, name: str, required: bool = True) -> Stamp | None:
        path = self.path
        stamp = _time(node, name, path, required)
        kind = stamp.notation if stamp is not None else None
        if stamp is not None and kind is not None:
            if self.notation is None:
                self.notation = (kind, node.line)
            elif kind != self.notation[0]:
                raise ImportFailure(
                    path,
                    node.line,
                    f"{node.tag}@{name}",
                    f"{stamp.raw!r} mixes notations: line {self.notation[1]} set "
                    f"{_NOTATION_NAMES[self.notation[0]]}",
                )
        return stamp

    def session(self, session_node: Node, num: int) -> LogSession:
        path = self.path
        session_start = self.timed(session_node, "starttime", required=False)
        topic = self.topic(session_node.one("topic", path))
        interactions = [self.interaction(node) for node in session_node.all("interaction")]
        current = session_node.one("currentquery", path, required=False)
        current_query = None
        if current is not None:
            current_query = (_text(current, "query", path), self.timed(current, "starttime", required=False))
        return LogSession(
            num,
            session_start,
            topic,
            interactions,
            current_query,
            session_node.line,
            _others(session_node, "num", "starttime"),
        )

    def topic(self, topic_node: Node) -> Topic:
        path = self.path
        topic_num = topic_node.attrs.get("num", "").strip()
        if not topic_num or len(topic_num) > 100 or any(ch.isspace() for ch in topic_num):
            raise ImportFailure(path, topic_node.line, "topic@num", "missing, or not a single word")
        subject = topic_node.one("subject", path, required=False)
        return Topic(
            num=topic_num,
            attrs={k: v for k, v in topic_node.attrs.items() if k != "num"},
            subject=None if subject is None else subject.text,
            subject_num=None if subject is None else subject.attrs.get("num"),
            desc=_text(topic_node, "desc", path),
            narr=_text(topic_node, "narr", path, required=False),
        )

    def interaction(self, interaction_node: Node) -> Interaction:
        path = self.path
        interaction_start = self.timed(interaction_node, "starttime")
        results = self.results(interaction_node)
        clicks = self.clicks(interaction_node, results)
        query_node = interaction_node.one("query", path)
        query = query_node.text
        if not query.strip():
            raise ImportFailure(path, query_node.line, "query", "empty query")
        return Interaction(
            _int(interaction_node, "num", path),
            interaction_start,
            query,
            results,
            clicks,
            interaction_node.line,
            _others(interaction_node, "num", "starttime"),
        )

    def results(self, interaction_node: Node) -> list[Result]:
        """The results shown, their ranks running on one by one (a later page may start after 1)."""
        path = self.path
        results = []
        results_node = interaction_node.one("results", path, required=False)
        for result_node in [] if results_node is None else results_node.all("result"):
            tags = [tag for tag in DOC_ID_TAGS if result_node.all(tag)]
            if not tags:
                raise ImportFailure(
                    path,
                    result_node.line,
                    "clueweb09id",
                    f"<result> has no document id ({', '.join(DOC_ID_TAGS)})",
                )
            self.id_tag = self.id_tag or tags[0]
            docid = _text(result_node, tags[0], path).strip()  # an id, not a text
            if not docid or len(docid) > 200:
                raise ImportFailure(path, result_node.line, tags[0], "empty or longer than 200 characters")
            results.append(
                Result(
                    rank=_int(result_node, "rank", path),
                    url=_text(result_node, "url", path, False) or "",
                    docid=docid,
                    title=_text(result_node, "title", path, False) or "",
                    snippet=_text(result_node, "snippet", path, False) or "",
                    line=result_node.line,
                )
            )
        # Ranks run on one by one in file order; a later page of results may start after 1 (11, 12, ...).
        for before, result in zip(results, results[1:], strict=False):
            if result.rank != before.rank + 1:
                raise ImportFailure(
                    path,
                    result.line,
                    "result@rank",
                    "ranks must run 1..n in order (a later "
                    f"page's from its first): expected {before.rank + 1}, found {result.rank}",
                )
        return results

    def clicks(self, interaction_node: Node, results: list[Result]) -> list[Click]:
        """The clicks, each on a rank that was shown."""
        path = self.path
        shown_ranks = {result.rank for result in results}
        clicks = []
        clicked = interaction_node.one("clicked", path, required=False)
        for click_node in [] if clicked is None else clicked.all("click"):
            rank_node = click_node.one("rank", path)
            rank = _int_text(rank_node, path)
            if rank not in shown_ranks:
                raise ImportFailure(
                    path,
                    rank_node.line,
                    "rank",
                    f"click on rank {rank}, but only "
                    f"{len(results)} results were shown"
                    + (f" (ranks {results[0].rank}-{results[-1].rank})" if results else ""),
                )
            clicks.append(
                Click(
                    _int(click_node, "num", path),
                    self.timed(click_node, "starttime"),
                    self.timed(click_node, "endtime"),
                    rank,
                    click_node.line,
                    _others(click_node, "num", "starttime", "endtime"),
                    [(child.tag, child.text) for child in click_node.children if child.tag != "rank"],
                )
            )
        return clicks


def read_log(data: bytes, path: str) -> Log:
    """Parse and check a whole Session Track log; raises ImportFailure (file, line, element/attribute)."""
    root = parse_tree(data, path)
    reader = _LogReader(path)
    sessions = []
    seen_sessions: dict[int, int] = {}
    for session_node in root.all("session"):
        num = _int(session_node, "num", path)
        if num in seen_sessions:
            raise ImportFailure(
                path,
                session_node.line,
                "session@num",
                f"session {num} already appears on line {seen_sessions[num]}",
            )
        seen_sessions[num] = session_node.line
        sessions.append(reader.session(session_node, num))
    if not sessions:
        raise ImportFailure(path, root.line, "session", f"<{root.tag}> holds no <session>")
    notation = reader.notation
    return Log(root.tag, reader.id_tag or DOC_ID_TAGS[0], sessions, notation[0] if notation else "clock")


def read_bytes(path: str | Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise ImportFailure(str(path), None, None, f"cannot read: {error.strerror}") from None


def read_log_file(path: str | Path) -> Log:
    return read_log(read_bytes(path), str(path))
