"""An archive read from disk a value at a time, so that memory follows its largest item, not its size
(docs/file-formats.md, "The study archive"; docs/security.md, ARCHIVE_MAX_BYTES).

The file is first copied in chunks to a private temporary file, refused as soon as it passes
ARCHIVE_MAX_BYTES (a pipe or a growing file included). The archive is one JSON object, not one line per row,
so it is read with a small scanner: the long lists (`STREAMED`: documents, participants and each one's
events, reference versions and each one's judgments, pools and their documents, the audit) are noted where
they start and iterated item by item from there later, in the order the import needs them (an archive's keys
may come in any order); every other value, an item of such a list included, is parsed whole with its lines
(lined_json) and its text checked (refuse_unstorable_text). Top-level keys the format does not have are
skipped unread. Every error names the file, the line and the JSON path."""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO, NoReturn

from studies.interchange import ImportFailure
from studies.interchange.archive.lined_json import (
    LinedDict,
    load_json_with_lines,
    refuse_unstorable_text,
    text_problem,
)

CHUNK = 64 * 1024
# The lists read an item at a time, by the path of the object that holds them ("[]": any item of a list).
STREAMED = {
    "$": frozenset(
        {"grade_levels", "documents", "scenarios", "systems", "participants", "reference_versions", "audit"}
    ),
    "$.participants[]": frozenset({"events"}),
    "$.reference_versions[]": frozenset({"judgments"}),
    "$.assessment": frozenset({"pools"}),
    "$.assessment.pools[]": frozenset({"documents"}),
}
# The archive's own top-level keys (export.py writes them); any other is skipped unread.
TOP_LEVEL = frozenset(
    {"format", "version", "exported_at", "study", "recruitment", "assessment"} | STREAMED["$"]
)
# Deeper than any archive nests (about 8 levels; an event's payload a few more): refused while scanned.
MAX_DEPTH = 500
# A JSON escape is at most 6 bytes in the file for 1 byte of UTF-8 (\u0041), so a string longer than this many
# times the document cap is over the cap whatever it holds: refused while it is scanned, never held whole.
ESCAPE_RATIO = 6

_WS = re.compile(rb"[ \t\r\n]*")
_STRUCTURE = re.compile(rb'["\[\]{}]')
_STRING_BODY = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.S)
_SCALAR = re.compile(rb'[^\s,:\[\]{}"]*')
_QUOTE, _COMMA, _COLON = ord('"'), ord(","), ord(":")
_OPEN_LIST, _CLOSE_LIST, _OPEN_OBJECT, _CLOSE_OBJECT = ord("["), ord("]"), ord("{"), ord("}")
_CLOSING = {_OPEN_LIST: _CLOSE_LIST, _OPEN_OBJECT: _CLOSE_OBJECT}


def archive_spooled_from(source: BinaryIO, name: str, *, limit: int, into: BinaryIO) -> None:
    """Copy `source` into `into` in chunks, refusing it as soon as it passes `limit` bytes (before the rest
    is read): what a command's file, a pipe or an upload feeds the import."""
    too_big = f"the archive is over ARCHIVE_MAX_BYTES ({limit} bytes)"
    copied = 0
    try:
        while chunk := source.read(CHUNK):
            copied += len(chunk)
            if copied > limit:
                raise ImportFailure(name, None, None, too_big)
            into.write(chunk)
    except OSError as error:
        raise ImportFailure(name, None, None, f"cannot read: {error.strerror}") from None
    into.flush()


@contextmanager
def archive_opened(path: str, *, limit: int, max_string_bytes: int) -> Iterator[ArchiveFile]:
    """The archive at `path`, spooled to a temporary file (removed afterwards), ready to be read: a regular
    file over `limit` is refused by its size before anything is read."""
    try:
        source = open(path, "rb")  # noqa: SIM115  # closed by the with below
    except OSError as error:
        raise ImportFailure(path, None, None, f"cannot read: {error.strerror}") from None
    with source, tempfile.TemporaryFile(prefix="sessionlab-archive-") as spool:
        info = os.fstat(source.fileno())
        if stat.S_ISREG(info.st_mode) and info.st_size > limit:
            raise ImportFailure(
                path,
                None,
                None,
                f"the archive is over ARCHIVE_MAX_BYTES ({limit} bytes): it has {info.st_size} bytes",
            )
        archive_spooled_from(source, path, limit=limit, into=spool)
        yield ArchiveFile(spool.fileno(), path, max_string_bytes)


class ArchiveFile:
    """The spooled archive, read at offsets (os.pread), so that a list and the lists inside its items are
    read side by side; `name` is the file the errors name."""

    def __init__(self, fd: int, name: str, max_string_bytes: int):
        self.fd = fd
        self.name = name
        self.max_string_bytes = max_string_bytes

    def read(self, offset: int, size: int) -> bytes:
        return os.pread(self.fd, size, offset)

    def root(self) -> LinedDict:
        """The top-level object: its small values parsed, its long lists as StreamedList."""
        cursor = _Cursor(self, 0, 1)
        first = cursor.peek()
        if first != _OPEN_OBJECT:
            line = cursor.line_at(cursor.i)
            if first is not None:
                cursor.skip("$")  # a syntax error or a too deep nesting says so first
            raise ImportFailure(self.name, line, "$", "expected an object")
        data = cursor.value("$", "$")
        if cursor.peek() is not None:
            cursor.fail("$", "extra data after the archive's object")
        return data  # type: ignore[return-value]  # an object, checked above


class StreamedList:
    """A list of the archive read an item at a time from where it starts in the file; iterable more than
    once. `where` is its JSON path ($.participants), `item_path` its items' pattern ($.participants[])."""

    def __init__(self, archive: ArchiveFile, offset: int, line: int, where: str, item_path: str):
        self.archive, self.offset, self.line = archive, offset, line
        self.where, self.item_path = where, item_path

    def __iter__(self) -> Iterator:
        cursor = _Cursor(self.archive, self.offset, self.line)
        cursor.peek()
        cursor.i += 1  # the "[" found when the list was noted
        if cursor.peek() == _CLOSE_LIST:
            return
        for n in range(2**63):
            yield cursor.value(self.item_path, f"{self.where}[{n}]")
            after = cursor.peek()
            cursor.i += 1
            if after == _CLOSE_LIST:
                return
            if after != _COMMA:
                cursor.i -= 1
                cursor.fail(f"{self.where}[{n}]", "expected ',' or ']' after the item")


class _Cursor:
    """A position in the archive with a buffer of the bytes read from it: `buf[i]` is the next byte, at file
    offset `base + i`; `line` is the line of `buf[line_i]`."""

    def __init__(self, archive: ArchiveFile, offset: int, line: int):
        self.archive = archive
        self.buf = bytearray()
        self.base = offset
        self.i = 0
        self.line, self.line_i = line, 0

    def line_at(self, j: int) -> int:
        """The line of `buf[j]` (j never goes back)."""
        self.line += self.buf.count(b"\n", self.line_i, j)
        self.line_i = j
        return self.line

    def _more(self, keep_from: int) -> int | None:
        """Read on, dropping the bytes before `keep_from`; returns how far indices moved, None at the end."""
        if keep_from:
            self.line_at(keep_from)
            del self.buf[:keep_from]
            self.base += keep_from
            self.i -= keep_from
            self.line_i -= keep_from
        data = self.archive.read(self.base + len(self.buf), max(CHUNK, len(self.buf)))
        if not data:
            return None
        self.buf += data
        return keep_from

    def fail(self, where: str, reason: str, at: int | None = None) -> NoReturn:
        line = self.line_at(max(self.i if at is None else at, self.line_i))
        raise ImportFailure(self.archive.name, line, None, f"invalid JSON in {where}: {reason}")

    def peek(self) -> int | None:
        """The next byte after white space (`i` moved to it), None at the end of the file."""
        while True:
            self.i = _WS.match(self.buf, self.i).end()  # type: ignore[union-attr]  # always matches
            if self.i < len(self.buf):
                return self.buf[self.i]
            if self._more(self.i) is None:
                return None

    def value(self, path: str, where: str):
        """The value at `i`: an object holding streamed lists read key by key, anything else parsed whole."""
        first = self.peek()
        if first is None:
            self.fail(where, "the file ends where a value was expected")
        if first == _OPEN_OBJECT and path in STREAMED:
            return self._object(path, where)
        line = self.line_at(self.i)
        start, end = self._scan(where, keep=True)
        with memoryview(self.buf) as view:
            raw = bytes(view[start:end])
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            line += raw.count(b"\n", 0, error.start)
            raise ImportFailure(self.archive.name, line, where, "not UTF-8 text") from None
        del raw
        parsed = load_json_with_lines(
            text,
            self.archive.name,
            max_string_bytes=self.archive.max_string_bytes,
            first_line=line,
            where=where,
        )
        refuse_unstorable_text(parsed, self.archive.name, where=where, line=line)
        return parsed

    def skip(self, where: str) -> None:
        self.peek()
        self._scan(where, keep=False)

    def _object(self, path: str, where: str) -> LinedDict:
        obj = LinedDict()
        obj.line = self.line_at(self.i)
        self.i += 1
        streamed = STREAMED[path]
        after = self.peek()
        if after == _CLOSE_OBJECT:
            self.i += 1
            return obj
        while True:
            if after != _QUOTE:
                self.fail(where, "expected a key in double quotes")
            key = self._key(where)
            if self.peek() != _COLON:
                self.fail(where, f"expected ':' after the key {key!r}")
            self.i += 1
            first = self.peek()
            if key in streamed and first == _OPEN_LIST:
                line = self.line_at(self.i)
                obj[key] = StreamedList(
                    self.archive, self.base + self.i, line, f"{where}.{key}", f"{path}.{key}[]"
                )
                self._scan(f"{where}.{key}", keep=False)
            elif path == "$" and key not in TOP_LEVEL:
                self.skip(f"{where}.{key}")
            else:
                obj[key] = self.value(f"{path}.{key}", f"{where}.{key}")
            after = self.peek()
            self.i += 1
            if after == _CLOSE_OBJECT:
                return obj
            if after != _COMMA:
                self.i -= 1
                self.fail(where, "expected ',' or '}' after a value")
            after = self.peek()

    def _key(self, where: str) -> str:
        line = self.line_at(self.i)
        start, end = self._scan(where, keep=True)
        try:
            key = json.loads(bytes(self.buf[start:end]).decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ImportFailure(self.archive.name, line, where, "a key that is not valid JSON text") from None
        problem = text_problem(key)
        if problem:
            raise ImportFailure(self.archive.name, line, where, f"a key holds {problem}")
        return key

    def _scan(self, where: str, *, keep: bool) -> tuple[int, int]:
        """Find the end of the value at `i` (after peek) and move `i` there; returns where it starts and ends
        in `buf`. With `keep` False the bytes behind the scan are dropped as it goes (a skipped value, or a
        streamed list noted for later, is never held whole)."""
        if self.buf[self.i] not in (_OPEN_LIST, _OPEN_OBJECT, _QUOTE):
            return self._scan_scalar(where, keep=keep)
        return self._scan_nested(where, keep=keep)

    def _scan_scalar(self, where: str, *, keep: bool) -> tuple[int, int]:
        """`_scan` of a number, true, false or null: up to the next delimiter, reading on while the buffer
        ends inside it."""
        buf = self.buf
        start = j = self.i
        while True:
            end = _SCALAR.match(buf, j).end()  # type: ignore[union-attr]  # always matches
            if end < len(buf) or (moved := self._more(start if keep else end)) is None:
                break
            start, j = start - moved, end - moved
            buf = self.buf
        if end == start:
            self.fail(where, f"unexpected character {chr(buf[start])!r}", at=start)
        self.i = end
        return start, end

    def _scan_nested(self, where: str, *, keep: bool) -> tuple[int, int]:
        """`_scan` of a string, a list or an object: to the quote or bracket that closes it, reading on as
        the buffer runs out."""
        buf = self.buf
        start = j = self.i
        first = buf[j]
        stack = [first] if first != _QUOTE else []
        in_string = first == _QUOTE
        string_start = j
        j += 1
        string_cap = None if not keep else ESCAPE_RATIO * self.archive.max_string_bytes
        while True:
            if in_string:
                k = _STRING_BODY.match(buf, j).end()  # type: ignore[union-attr]  # always matches
                if k < len(buf) and buf[k] == _QUOTE:
                    j = k + 1
                    in_string = False
                    if not stack:
                        break
                    continue
                self._check_string_cap(string_cap, k - string_start, string_start)
                j = k  # the end of the buffer, or a backslash that is its last byte
            else:
                found = _STRUCTURE.search(buf, j)
                if found is not None:
                    c = buf[found.start()]
                    j = found.end()
                    if c == _QUOTE:
                        in_string, string_start = True, j - 1
                    elif self._bracket_closes_all(where, c, stack, j - 1):
                        break
                    continue
                j = len(buf)
            moved = self._more(start if keep else j)
            if moved is None:
                self.fail(
                    where, f"the file ends inside {'a string' if in_string else 'a list or object'}", at=j
                )
            start, j, string_start = start - moved, j - moved, string_start - moved
            buf = self.buf
        self.i = j
        return start, j

    def _check_string_cap(self, string_cap: int | None, length: int, string_start: int) -> None:
        """A kept string whose bytes in the file pass `string_cap` is refused before it is read whole."""
        if string_cap is not None and length > string_cap:
            raise ImportFailure(
                self.archive.name,
                self.line_at(max(string_start, self.line_i)),
                None,
                f"a string of more than {string_cap} bytes in the file is over "
                f"ARCHIVE_MAX_DOCUMENT_BYTES ({self.archive.max_string_bytes} bytes)",
            )

    def _bracket_closes_all(self, where: str, c: int, stack: list[int], at: int) -> bool:
        """An opening bracket goes on `stack` (refused past MAX_DEPTH); a closing one must match the last
        opened. True when it closes the outermost."""
        if c in _CLOSING:
            stack.append(c)
            if len(stack) > MAX_DEPTH:
                self.fail(where, "nested too deeply", at=at)
            return False
        if _CLOSING[stack.pop()] != c:
            self.fail(where, f"{chr(c)!r} closes a {'list' if c == _CLOSE_OBJECT else 'object'}", at=at)
        return not stack
