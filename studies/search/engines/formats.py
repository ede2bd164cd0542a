"""Readers for document collections, topics and relevance judgments.

Every reader reads its whole input before returning and raises `FormatError` ("path:line: reason") on the
first malformed part, so a caller never receives a partial collection. Plain Python only: no Django here.
"""

from __future__ import annotations

import html
import json
import re
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from scoring.lib.errors import InputError
from scoring.lib.trec_io import read_qrels  # noqa: F401  (re-exported: the TREC qrels reader lives in scoring)

__all__ = [
    "DEFAULT_CRANFIELD_GRADES",
    "Document",
    "FormatError",
    "Judgment",
    "ParsedCollection",
    "Topic",
    "judgments_from_qrels",
    "read_cranfield",
    "read_jsonl_documents",
    "read_qrels",
    "read_trec_documents",
    "read_trec_topics",
]

# Cranfield relevance codes (1 = complete answer .. 4 = minimum interest, -1 = judged not relevant; lower is
# more relevant) onto the study's 0..3 scale (higher is more relevant).
DEFAULT_CRANFIELD_GRADES: Mapping[int, int] = {1: 3, 2: 2, 3: 1, 4: 1, -1: 0}


class FormatError(InputError):
    """A malformed collection, topic or judgment file. `line` is 1-based, None when not tied to a line."""


@dataclass(frozen=True)
class Document:
    external_id: str
    title: str
    text: str
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Topic:
    topic_id: str
    title: str
    text: str
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Judgment:
    topic_id: str
    doc_id: str
    grade: int


@dataclass(frozen=True)
class ParsedCollection:
    documents: list[Document]
    topics: list[Topic]
    judgments: list[Judgment]


def _read_text(path: str | Path) -> str:
    """The whole file as text with universal newlines (CRLF and CR become LF)."""
    try:
        with open(path, encoding="utf-8", newline=None) as handle:
            return handle.read()
    except OSError as exc:
        raise FormatError(str(path), None, f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise FormatError(str(path), None, f"not UTF-8 text ({exc.reason})") from None


def _squash(text: str) -> str:
    """Collapse runs of whitespace (line breaks included) into single spaces."""
    return " ".join(text.split())


def _check_unique(seen: dict[str, int], key: str, path: str, line: int, what: str) -> None:
    if key in seen:
        raise FormatError(path, line, f"duplicate {what} {key!r} (first at line {seen[key]})")
    seen[key] = line


# --- Cranfield -----------------------------------------------------------------------------------------

_SMART_MARKER = re.compile(r"^\.([A-Z])(?:\s+(.*))?$")


def _check_smart_record_id(path: Path, number: int, rest: str) -> None:
    """A `.I` line's record id: there, and without a space."""
    if not rest:
        raise FormatError(str(path), number, ".I without a record id")
    if " " in rest:
        raise FormatError(str(path), number, f"record id {rest!r} contains a space")


def _check_smart_field_marker(
    path: Path, number: int, letter: str, rest: str, allowed: str, *, in_record: bool
) -> None:
    """A field marker (`.T`, `.W`, ...): one of `allowed`, inside a record, alone on its line."""
    if letter not in allowed:
        raise FormatError(
            str(path),
            number,
            f"unknown field marker .{letter} (expected one of "
            + ", ".join("." + c for c in "I" + allowed)
            + ")",
        )
    if not in_record:
        raise FormatError(str(path), number, f"field .{letter} before the first .I")
    if rest:
        raise FormatError(str(path), number, f"unexpected text after .{letter} on the marker line")


def _read_smart_records(path: Path, allowed: str) -> list[tuple[str, int, dict[str, str]]]:
    """Records of a SMART-style file (`.I id` then field markers `.T`, `.W`, ... on their own lines).

    Returns (id, line of the .I, {field letter: text}). A field repeated inside one record (documents 576
    and 578 of cran.all.1400 repeat `.W`) has its parts joined: the text is kept, not guessed away; the
    letters of repeated fields are listed under the key "repeated"."""
    text = _read_text(path)
    records: list[tuple[str, int, dict[str, str]]] = []
    current: dict[str, list[str]] | None = None
    field_name: str | None = None
    seen: dict[str, int] = {}
    repeated: dict[str, list[str]] = {}

    def close() -> None:
        if current is not None:
            rid, rline = records[-1][0], records[-1][1]
            records[-1] = (rid, rline, {k: "\n".join(v) for k, v in current.items()})

    for number, line in enumerate(text.split("\n"), start=1):
        marker = _SMART_MARKER.match(line.rstrip())
        if marker:
            letter, rest = marker.group(1), (marker.group(2) or "").strip()
            if letter == "I":
                _check_smart_record_id(path, number, rest)
                _check_unique(seen, rest, str(path), number, "record id")
                close()
                records.append((rest, number, {}))
                current, field_name = {}, None
                continue
            _check_smart_field_marker(path, number, letter, rest, allowed, in_record=current is not None)
            assert current is not None  # checked just above
            field_name = letter
            if letter in current:
                repeated.setdefault(records[-1][0], []).append(letter)
            current.setdefault(letter, [])
            continue
        if current is None or field_name is None:
            if line.strip():
                where = "before the first .I" if current is None else "before the first field marker"
                raise FormatError(str(path), number, f"text {where}: {line.strip()[:40]!r}")
            continue
        current[field_name].append(line)
    close()
    return [
        (rid, line, {**fields, "repeated": "".join(repeated[rid])} if rid in repeated else fields)
        for rid, line, fields in records
    ]


def _read_cranqrel(
    path: Path, topic_ids: set[str], doc_ids: set[str], grade_map: Mapping[int, int]
) -> list[Judgment]:
    text = _read_text(path)
    judgments: list[Judgment] = []
    seen: dict[tuple[str, str], int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 3:
            raise FormatError(str(path), number, f"expected 3 fields (query doc code), found {len(fields)}")
        topic, doc, code_text = fields
        try:
            code = int(code_text)
        except ValueError:
            raise FormatError(str(path), number, f"relevance code {code_text!r} is not an integer") from None
        if code not in grade_map:
            raise FormatError(
                str(path),
                number,
                f"relevance code {code} has no grade in the grade mapping "
                f"(mapped codes: {sorted(grade_map)})",
            )
        topic = str(int(topic)) if topic.isdigit() else topic
        doc = str(int(doc)) if doc.isdigit() else doc
        if topic not in topic_ids:
            raise FormatError(
                str(path), number, f"query number {topic!r} is not a position 1..{len(topic_ids)} in cran.qry"
            )
        if doc not in doc_ids:
            raise FormatError(str(path), number, f"document {doc!r} is not in cran.all.1400")
        if (topic, doc) in seen:
            raise FormatError(
                str(path),
                number,
                f"query {topic} document {doc} judged twice (first at line {seen[topic, doc]})",
            )
        seen[topic, doc] = number
        judgments.append(Judgment(topic, doc, int(grade_map[code])))
    return judgments


def read_cranfield(
    folder: str | Path, grade_map: Mapping[int, int] = DEFAULT_CRANFIELD_GRADES
) -> ParsedCollection:
    """Read cran.all.1400, cran.qry and cranqrel from `folder`.

    Documents keep their `.I` as external_id, `.T` as title, `.W` as text (possibly empty) and `.A`/`.B` in
    extra (author, bibliography). Topics are numbered 1..225 by their position in cran.qry, as cranqrel
    numbers them; the `.I` written in cran.qry is kept in extra["original_id"]. `grade_map` turns relevance
    codes into grades (default 1->3, 2->2, 3->1, 4->1, -1->0); a code it does not map is an error."""
    folder = Path(folder)
    documents: list[Document] = []
    for rid, _line, fields in _read_smart_records(folder / "cran.all.1400", "TABW"):
        documents.append(
            Document(
                external_id=rid,
                title=_squash(fields.get("T", "")),
                text=_squash(fields.get("W", "")),
                extra={
                    "author": _squash(fields.get("A", "")),
                    "bibliography": _squash(fields.get("B", "")),
                    **({"repeated_fields": sorted(set(fields["repeated"]))} if "repeated" in fields else {}),
                },
            )
        )
    topics: list[Topic] = []
    for position, (rid, line, fields) in enumerate(_read_smart_records(folder / "cran.qry", "W"), start=1):
        query = _squash(fields.get("W", ""))
        if not query:
            raise FormatError(str(folder / "cran.qry"), line, f"query .I {rid} has no text")
        topics.append(Topic(topic_id=str(position), title=query, text=query, extra={"original_id": rid}))
    judgments = _read_cranqrel(
        folder / "cranqrel", {t.topic_id for t in topics}, {d.external_id for d in documents}, grade_map
    )
    return ParsedCollection(documents, topics, judgments)


def judgments_from_qrels(qrels: Mapping[str, Mapping[str, int]]) -> list[Judgment]:
    """{topic: {doc: grade}} (what `read_qrels` returns) as a list of Judgments."""
    return [Judgment(topic, doc, grade) for topic, docs in qrels.items() for doc, grade in docs.items()]


# --- TREC SGML-ish files --------------------------------------------------------------------------------

_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9_.-]*)(?:\s[^<>]*)?>")
_ANY_TAG = re.compile(r"<[^<>]*>")


class _Lines:
    """Offset -> 1-based line number."""

    def __init__(self, text: str):
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def __call__(self, offset: int) -> int:
        return bisect_right(self.starts, offset)


def _clean(fragment: str) -> str:
    return _squash(html.unescape(_ANY_TAG.sub(" ", fragment)))


def _blocks(text: str, path: str, lines: _Lines, name: str) -> list[tuple[int, int, int]]:
    """(start of content, end of content, line of opening tag) of each <name>...</name>; anything but
    whitespace outside those blocks, a nested or an unclosed block, is an error."""
    blocks = []
    position = 0
    open_at: int | None = None
    for tag in _TAG.finditer(text):
        if tag.group(2).lower() != name:
            continue
        if open_at is None:
            stray = text[position : tag.start()]
            if stray.strip():
                offset = position + len(stray) - len(stray.lstrip())
                raise FormatError(path, lines(offset), f"text outside <{name}>: {stray.strip()[:40]!r}")
            if tag.group(1):
                raise FormatError(path, lines(tag.start()), f"</{name}> without an opening <{name}>")
            open_at = tag.start()
            content_start = tag.end()
        else:
            if not tag.group(1):
                raise FormatError(
                    path, lines(tag.start()), f"<{name}> inside the <{name}> opened at line {lines(open_at)}"
                )
            blocks.append((content_start, tag.start(), lines(open_at)))
            open_at = None
            position = tag.end()
    if open_at is not None:
        raise FormatError(path, lines(open_at), f"<{name}> is never closed")
    stray = text[position:]
    if stray.strip():
        offset = position + len(stray) - len(stray.lstrip())
        raise FormatError(path, lines(offset), f"text outside <{name}>: {stray.strip()[:40]!r}")
    return blocks


_TITLE_TAGS = ("title", "headline", "head", "hl")


def read_trec_documents(path: str | Path) -> list[Document]:
    """Read TREC-style documents: `<DOC><DOCNO>id</DOCNO><TITLE>..</TITLE><TEXT>..</TEXT></DOC>`.

    The title is the first of TITLE, HEADLINE, HEAD or HL; several TEXT parts are joined; other elements
    go into extra under their lower-cased tag name. Tags nested inside an element (e.g. <P>) are dropped and
    HTML entities decoded. A DOC without DOCNO, a duplicate DOCNO, an unclosed element or text between
    elements is an error."""
    path_s = str(path)
    text = _read_text(path)
    lines = _Lines(text)
    documents: list[Document] = []
    seen: dict[str, int] = {}
    for start, end, doc_line in _blocks(text, path_s, lines, "doc"):
        fields: dict[str, list[str]] = {}
        position = start
        while True:
            tag = _TAG.search(text, position, end)
            stray = text[position : tag.start() if tag else end]
            if stray.strip():
                offset = position + len(stray) - len(stray.lstrip())
                raise FormatError(path_s, lines(offset), f"text outside any element: {stray.strip()[:40]!r}")
            if tag is None:
                break
            name = tag.group(2).lower()
            if tag.group(1):
                raise FormatError(path_s, lines(tag.start()), f"</{tag.group(2)}> without an opening tag")
            closing = re.compile(rf"</{re.escape(tag.group(2))}\s*>", re.IGNORECASE).search(
                text, tag.end(), end
            )
            if closing is None:
                raise FormatError(
                    path_s, lines(tag.start()), f"<{tag.group(2)}> is not closed inside its <DOC>"
                )
            fields.setdefault(name, []).append(_clean(text[tag.end() : closing.start()]))
            position = closing.end()
        docnos = fields.pop("docno", [])
        if not docnos or not docnos[0]:
            raise FormatError(path_s, doc_line, "<DOC> without a <DOCNO>")
        if len(docnos) > 1:
            raise FormatError(path_s, doc_line, f"<DOC> {docnos[0]!r} has {len(docnos)} <DOCNO> elements")
        doc_id = docnos[0]
        _check_unique(seen, doc_id, path_s, doc_line, "document id")
        title = next((" ".join(fields.pop(t)) for t in _TITLE_TAGS if t in fields), "")
        body = "\n\n".join(part for part in fields.pop("text", []) if part)
        extra = {name: " ".join(parts) for name, parts in fields.items()}
        documents.append(Document(doc_id, title, body, extra))
    return documents


_TOPIC_FIELD = re.compile(r"</?(num|title|desc|narr|[a-z][a-z0-9_]*)\s*>", re.IGNORECASE)
_TOPIC_PREFIXES = {"num": "Number:", "title": "Topic:", "desc": "Description:", "narr": "Narrative:"}


def _topic_fields(text: str, start: int, end: int, path_s: str, lines: _Lines) -> dict[str, str]:
    """{field name: raw text} of the topic between `start` and `end`: the text after each opening tag up to
    the next tag (a field given twice, by its tags' parts, is joined). FormatError for text outside a field
    or a known field opened twice."""
    fields: dict[str, str] = {}
    current: str | None = None
    current_start = start
    position = start
    for tag in _TOPIC_FIELD.finditer(text, start, end):
        if current is None and text[position : tag.start()].strip():
            raise FormatError(
                path_s,
                lines(
                    position + len(text[position : tag.start()]) - len(text[position : tag.start()].lstrip())
                ),
                "text before the first field of the topic",
            )
        if current is not None:
            fields[current] = fields.get(current, "") + " " + text[current_start : tag.start()]
        name = tag.group(1).lower()
        if tag.group(0).startswith("</"):
            current = None
        else:
            if name in fields and name in _TOPIC_PREFIXES:
                raise FormatError(path_s, lines(tag.start()), f"<{name}> appears twice in one topic")
            current = name
            fields.setdefault(name, "")
        current_start = tag.end()
        position = tag.end()
    if current is not None:
        fields[current] = fields.get(current, "") + " " + text[current_start:end]
    elif text[position:end].strip():
        raise FormatError(path_s, lines(position), "text after the last field of the topic")
    return fields


def _topic_values(fields: dict[str, str]) -> dict[str, str]:
    """The fields' text unescaped and squashed, without the classic prefixes ("Number:", "Topic:", ...)."""
    values = {}
    for name, raw in fields.items():
        value = _squash(html.unescape(raw))
        prefix = _TOPIC_PREFIXES.get(name)
        if prefix and value.lower().startswith(prefix.lower()):
            value = value[len(prefix) :].strip()
        values[name] = value
    return values


def read_trec_topics(path: str | Path) -> list[Topic]:
    """Read TREC topics: `<top> <num> Number: 301 <title> .. <desc> Description: .. <narr> Narrative: ..
    </top>`. Fields may be left open (classic TREC) or closed (`</title>`). Topic(topic_id=num, title,
    text=description, extra={"narrative": ..., other fields}). A topic without num or title, or a duplicate
    num, is an error."""
    path_s = str(path)
    text = _read_text(path)
    lines = _Lines(text)
    topics: list[Topic] = []
    seen: dict[str, int] = {}
    for start, end, top_line in _blocks(text, path_s, lines, "top"):
        values = _topic_values(_topic_fields(text, start, end, path_s, lines))
        number = values.pop("num", "")
        if not number:
            raise FormatError(path_s, top_line, "topic without a <num>")
        if " " in number:
            raise FormatError(path_s, top_line, f"topic number {number!r} contains a space")
        _check_unique(seen, number, path_s, top_line, "topic number")
        title = values.pop("title", "")
        if not title:
            raise FormatError(path_s, top_line, f"topic {number} has no <title>")
        description = values.pop("desc", "")
        extra = {"narrative": values.pop("narr", "")}
        extra.update(values)
        topics.append(Topic(number, title, description, extra))
    return topics


# --- JSON lines -----------------------------------------------------------------------------------------


def read_jsonl_documents(path: str | Path) -> list[Document]:
    """One JSON object per line: "id" (string or integer, required), "title" and "text" (strings, optional),
    any other keys into extra. Blank lines are skipped; a line that is not an object, a missing or duplicate
    id, or a non-string title/text is an error."""
    path_s = str(path)
    text = _read_text(path)
    documents: list[Document] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError(path_s, number, f"not valid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(record, dict):
            raise FormatError(path_s, number, f"expected a JSON object, found {type(record).__name__}")
        if "id" not in record:
            raise FormatError(path_s, number, 'object without an "id"')
        raw_id = record.pop("id")
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
            raise FormatError(path_s, number, f'"id" must be a string or an integer, found {raw_id!r}')
        doc_id = str(raw_id).strip()
        if not doc_id:
            raise FormatError(path_s, number, '"id" is empty')
        values = {}
        for key in ("title", "text"):
            value = record.pop(key, "")
            if value is None:
                value = ""
            if not isinstance(value, str):
                raise FormatError(path_s, number, f'"{key}" must be a string, found {type(value).__name__}')
            values[key] = value
        _check_unique(seen, doc_id, path_s, number, "document id")
        documents.append(Document(doc_id, values["title"], values["text"], record))
    return documents
