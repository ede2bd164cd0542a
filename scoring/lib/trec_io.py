"""Readers for TREC files. Each reads the whole file before returning, so a bad line means no partial result.

The file readers split whole files with numpy (a run of 10 million lines is read in seconds rather than a
minute of per-line Python); `parse_qrels_lines` stays the simple per-line reference for small inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import InputError
from .metrics import id_hashes, topic_keys

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]

QRELS_FIELDS = "topic iteration docid grade"
RUN_FIELDS = "topic Q0 docid rank score tag"

# Bytes per numpy pass: big enough that the per-chunk overhead vanishes, small enough that the temporary
# arrays (a few times the chunk) stay far below the size of the file.
_CHUNK = 1 << 22


def parse_qrels_lines(lines, path: str = "<qrels>") -> Qrels:
    """`topic iteration docid grade` per line (whitespace separated). Grades may be negative (trec_eval
    treats them as unjudged). A document judged twice for a topic is an error: which grade wins is not ours
    to guess."""
    qrels: Qrels = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) != 4:
            raise InputError(path, number, f"expected 4 fields ({QRELS_FIELDS}), found {len(fields)}")
        topic, _iteration, doc, grade_text = fields
        try:
            grade = int(grade_text)
        except ValueError:
            raise InputError(path, number, f"grade {grade_text!r} is not an integer") from None
        judged = qrels.setdefault(topic, {})
        if doc in judged and judged[doc] != grade:
            raise InputError(path, number, f"document {doc!r} of topic {topic!r} is judged twice ({judged[doc]} and {grade})")
        judged[doc] = grade
    return qrels


def _read_bytes(path: str | Path) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise InputError(str(path), None, f"cannot read: {exc.strerror}") from None


@dataclass
class Columns:
    """Some whitespace-separated fields of every non-blank line: fields[k] is a numpy 'S' array (bytes) of
    field k, lines the 1-based line number of each row."""

    fields: dict[int, np.ndarray]
    lines: np.ndarray


# _KEEP_LOW_BYTES[k] keeps the first k bytes of a little-endian uint64.
_KEEP_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)


def _field_bytes(padded: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The bytes padded[starts[i]:starts[i] + lengths[i]] of each row as one fixed-width 'S' array (width a
    multiple of 8).

    Gathers 8 bytes at a time through an unaligned uint64 view of the buffer, then clears the bytes past
    each field's end; `padded` has 8 zero bytes more than the widest field after the data."""
    words = max(-(-int(lengths.max()) // 8) if lengths.size else 1, 1)
    unaligned = np.ndarray((padded.size - 7,), dtype="<u8", buffer=padded, strides=(1,))
    out = np.empty((starts.size, words), dtype="<u8")
    for j in range(words):
        column = unaligned[starts + 8 * j]
        left = lengths - 8 * j
        if left.size and left.min() < 8:  # some field ends inside this word: keep only its own (low) bytes
            np.clip(left, 0, 8, out=left)
            column &= _KEEP_LOW_BYTES[left]
        out[:, j] = column
    return out.view(f"S{8 * words}").ravel()


def split_columns(
    data: bytes, path: str, count: int, wanted: tuple[int, ...], names: str, extra_ok: bool = False
) -> Columns:
    """Split `data` into lines of exactly `count` whitespace-separated fields (blank lines skipped) and keep
    the fields numbered in `wanted`. A line with another number of fields raises InputError naming it;
    with `extra_ok`, more fields are allowed and ignored (trec_eval reads text after a run's tag as part
    of the tag: its own test run has "STANDARD more junk at").
    Bytes <= 0x20 count as whitespace (C's isspace, and the NUL that cannot be part of an id)."""
    buffer = np.frombuffer(data, dtype=np.uint8)
    parts: dict[int, list[np.ndarray]] = {k: [] for k in wanted}
    line_parts: list[np.ndarray] = []
    base_line = 0
    position = 0
    while position < buffer.size:
        stop = min(position + _CHUNK, buffer.size)
        if stop < buffer.size:
            newline = data.rfind(b"\n", position, stop)
            if newline < 0:
                newline = data.find(b"\n", stop)
            stop = buffer.size if newline < 0 else newline + 1
        chunk = buffer[position:stop]
        blank = np.empty(chunk.size + 2, dtype=bool)
        blank[0] = blank[-1] = True
        np.less_equal(chunk, 32, out=blank[1:-1])
        edges = np.flatnonzero(blank[1:] != blank[:-1])
        starts, ends = edges[0::2], edges[1::2]
        # Tokens before each newline, hence tokens per line; the last line may lack its newline.
        newlines = np.flatnonzero(chunk == 10)
        before = np.searchsorted(starts, newlines)
        per_line = np.diff(np.concatenate(([0], before, [starts.size])))
        if newlines.size and newlines[-1] == chunk.size - 1:
            per_line = per_line[:-1]
        if extra_ok:
            bad = np.flatnonzero((per_line != 0) & (per_line < count))
        else:
            bad = np.flatnonzero((per_line != 0) & (per_line != count))
        if bad.size:
            line = int(bad[0])
            at_least = "at least " if extra_ok else ""
            raise InputError(
                path, base_line + line + 1, f"expected {at_least}{count} fields ({names}), found {per_line[line]}"
            )
        nonblank = np.count_nonzero(per_line)
        if starts.size == count * nonblank:  # every line has exactly `count` fields: no gather needed
            field_starts, field_ends = starts.reshape(-1, count), ends.reshape(-1, count)
        else:
            used = per_line[per_line != 0]
            first = (np.cumsum(used) - used)[:, None] + np.arange(count)
            field_starts, field_ends = starts[first], ends[first]
        field_lengths = {k: field_ends[:, k] - field_starts[:, k] for k in wanted}
        widest = max(int(lengths.max()) if nonblank else 1 for lengths in field_lengths.values())
        padded = np.concatenate((chunk, np.zeros(widest + 16, dtype=np.uint8)))
        for k in wanted:
            parts[k].append(_field_bytes(padded, field_starts[:, k], field_lengths[k]))
        line_parts.append(np.flatnonzero(per_line) + base_line + 1)
        base_line += int(newlines.size)
        position = stop
    fields = {k: _concat_bytes(parts[k]) for k in wanted}
    lines = np.concatenate(line_parts) if line_parts else np.zeros(0, dtype=np.int64)
    return Columns(fields, lines)


def _concat_bytes(arrays: list[np.ndarray]) -> np.ndarray:
    if not arrays:
        return np.zeros(0, dtype="S1")
    width = max(a.dtype.itemsize for a in arrays)
    return np.concatenate([a if a.dtype.itemsize == width else a.astype(f"S{width}") for a in arrays])


def _decode(raw: bytes, path: str, line: int, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(path, line, f"{what} {raw!r} is not UTF-8 text") from None


def _fast_floats(texts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Parse plain decimals ([+-]digits[.digits], mantissa below 2^53) column by column.

    Returns (values, ok): rows not of that form have ok False and are left to a full parser. The result is
    exactly what strtod gives, because mantissa and 10^k (k <= 22) are exact doubles and one IEEE division
    rounds correctly (Clinger's fast path). Works in blocks of rows that stay in the CPU cache."""
    width = texts.dtype.itemsize
    matrix = texts.view(np.uint8).reshape(-1, width)
    values = np.empty(matrix.shape[0])
    ok = np.empty(matrix.shape[0], dtype=bool)
    for start in range(0, matrix.shape[0], _FLOAT_BLOCK):
        block = slice(start, start + _FLOAT_BLOCK)
        values[block], ok[block] = _fast_floats_block(matrix[block])
    return values, ok


_FLOAT_BLOCK = 1 << 15


def _fast_floats_block(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    used = int(np.flatnonzero(matrix.any(axis=0)).max(initial=-1)) + 1
    columns = np.ascontiguousarray(matrix[:, :used].T)  # one contiguous row per character position
    n = matrix.shape[0]
    first = columns[0] if used else np.zeros(n, dtype=np.uint8)
    negative = first == 45
    signed = negative | (first == 43)
    mantissa = np.zeros(n, dtype=np.int64)
    digits = np.zeros(n, dtype=np.int8)
    fraction = np.zeros(n, dtype=np.int8)
    dots = np.zeros(n, dtype=np.int8)
    bad = np.zeros(n, dtype=bool)
    for j in range(used):
        column = columns[j]
        value = column - np.uint8(48)  # wraps below '0', so one comparison finds the digits
        is_digit = value < 10
        is_dot = column == 46
        allowed = is_digit | is_dot | (column == 0)
        if j == 0:
            allowed |= signed
        bad |= ~allowed
        mantissa = np.where(is_digit, mantissa * 10 + value, mantissa)
        digits += is_digit
        fraction += is_digit & (dots > 0)
        dots += is_dot
    ok = ~bad & (digits > 0) & (digits <= 18) & (dots <= 1) & (mantissa < 2**53) & (fraction <= 22)
    values = mantissa.astype(np.float64) / _POWERS_OF_TEN[np.minimum(fraction, 22)]
    return np.where(negative, -values, values), ok


_POWERS_OF_TEN = np.array([10.0**k for k in range(23)])


def _numbers(texts: np.ndarray, lines: np.ndarray, path: str, dtype, what: str, kind: str) -> np.ndarray:
    try:
        if dtype is np.float64 and texts.size:
            values, ok = _fast_floats(texts)
            if not ok.all():
                values[~ok] = texts[~ok].astype(np.float64)
        else:
            values = texts.astype(dtype)
    except (ValueError, OverflowError):
        convert = int if dtype is np.int64 else float
        for raw, line in zip(texts.tolist(), lines.tolist(), strict=True):
            try:
                convert(raw)
            except (ValueError, OverflowError):
                shown = raw.decode("utf-8", "replace")
                raise InputError(path, int(line), f"{what} {shown!r} is not {kind}") from None
        raise
    if dtype is np.float64:
        nan = np.flatnonzero(np.isnan(values))
        if nan.size:
            raise InputError(path, int(lines[nan[0]]), f"{what} {texts[nan[0]].decode()!r} is not a number")
    return values


def _segments(topics: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Starts and lengths of the runs of equal consecutive topics."""
    if not topics.size:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    heads = np.concatenate(([0], np.flatnonzero(topics[1:] != topics[:-1]) + 1))
    lengths = np.diff(np.concatenate((heads, [topics.size])))
    return heads, lengths


def _group_by_topic(topic_texts: np.ndarray, lines: np.ndarray, path: str, *arrays: np.ndarray):
    """Group rows by topic (topics in order of first appearance, rows of a topic in file order).
    Returns (topics, bounds, lines, *arrays), bounds[i]:bounds[i+1] being topic i's rows."""
    heads, lengths = _segments(topic_texts)
    labels = [_decode(topic_texts[h], path, int(lines[h]), "topic") for h in heads.tolist()]
    order: dict[str, int] = {}
    codes = np.array([order.setdefault(label, len(order)) for label in labels], dtype=np.int64)
    if len(order) < len(labels):
        # A topic's lines are split over the file (trec_eval allows it): group them, keeping file order.
        permutation = np.argsort(np.repeat(codes, lengths), kind="stable")
        lines = lines[permutation]
        arrays = tuple(a[permutation] for a in arrays)
        lengths = np.bincount(codes, weights=lengths, minlength=len(order)).astype(np.int64)
    bounds = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    return (list(order), bounds, lines, *arrays)


def _maybe_duplicates(hashes: np.ndarray, bounds: np.ndarray) -> bool:
    """False when no topic lists a document twice; True means "look closer" (equal hash keys)."""
    owner = np.repeat(np.arange(bounds.size - 1), np.diff(bounds))
    keys = np.sort(topic_keys(hashes, owner))
    return bool((keys[1:] == keys[:-1]).any())


@dataclass
class QrelsColumns:
    """Qrels grouped by topic: topics[i] owns docs[bounds[i]:bounds[i+1]] (numpy 'S', UTF-8 bytes), the
    same slice of grades (int64) and of lines (1-based line numbers). A document judged twice with the same
    grade appears once."""

    topics: list[str]
    bounds: np.ndarray
    docs: np.ndarray
    grades: np.ndarray
    lines: np.ndarray
    hashes: np.ndarray | None = None  # metrics.id_hashes(docs), kept for the join


def read_qrels_columns(path: str | Path) -> QrelsColumns:
    """Read a TREC qrels file as columns; raises InputError naming file and line."""
    name = str(path)
    columns = split_columns(_read_bytes(path), name, 4, (0, 2, 3), QRELS_FIELDS)
    grades = _numbers(columns.fields[3], columns.lines, name, np.int64, "grade", "an integer")
    topics, bounds, lines, docs, grades = _group_by_topic(columns.fields[0], columns.lines, name, columns.fields[2], grades)
    hashes = id_hashes(docs)
    if not _maybe_duplicates(hashes, bounds):
        return QrelsColumns(topics, bounds, docs, grades, lines, hashes)
    # Some document may be judged twice: same grade, keep one; different grades, refuse.
    pieces = []
    for i, topic in enumerate(topics):
        start, stop = int(bounds[i]), int(bounds[i + 1])
        order = np.argsort(docs[start:stop], kind="stable") + start
        ordered = docs[order]
        same = np.flatnonzero(ordered[1:] == ordered[:-1])
        if same.size:
            for k in same.tolist():
                first, again = order[k], order[k + 1]
                if grades[first] != grades[again]:
                    doc = docs[again].decode("utf-8", "replace")
                    raise InputError(
                        name, int(lines[again]),
                        f"document {doc!r} of topic {topic!r} is judged twice ({grades[first]} and {grades[again]})",
                    )
            order = np.delete(order, same + 1)
        pieces.append(order)
    if pieces:
        permutation = np.concatenate(pieces)
        sizes = np.array([p.size for p in pieces], dtype=np.int64)
        bounds = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        docs, grades, lines = docs[permutation], grades[permutation], lines[permutation]
    return QrelsColumns(topics, bounds, docs, grades, lines, id_hashes(docs))


def read_qrels(path: str | Path) -> Qrels:
    """Read a TREC qrels file into {topic: {docid: grade}}; raises InputError naming file and line."""
    name = str(path)
    columns = read_qrels_columns(path)
    qrels: Qrels = {}
    for i, topic in enumerate(columns.topics):
        start, stop = int(columns.bounds[i]), int(columns.bounds[i + 1])
        docs = _texts(columns.docs[start:stop], columns.lines[start:stop], name, "docid")
        qrels[topic] = dict(zip(docs, columns.grades[start:stop].tolist(), strict=True))
    return qrels


def _texts(raw: np.ndarray, lines: np.ndarray, path: str, what: str) -> list[str]:
    """Decode a numpy 'S' array of UTF-8 ids to str, vectorized when it is all ASCII."""
    if raw.size and raw.view(np.uint8).max() < 128:
        return raw.astype(f"U{raw.dtype.itemsize}").tolist()
    return [_decode(item, path, int(line), what) for item, line in zip(raw.tolist(), lines.tolist(), strict=True)]


@dataclass
class RunColumns:
    """A run grouped by topic: topics[i] owns docs[bounds[i]:bounds[i+1]] (numpy 'S', UTF-8 bytes), the
    same slice of scores (float64) and of lines (1-based line numbers). Topics are in order of first
    appearance; within a topic, lines keep the file's order (the rank column is ignored, as in trec_eval)."""

    topics: list[str]
    bounds: np.ndarray
    docs: np.ndarray
    scores: np.ndarray
    lines: np.ndarray
    hashes: np.ndarray | None = None  # metrics.id_hashes(docs), kept for the join


def read_run_columns(path: str | Path) -> RunColumns:
    """Read a TREC run (`topic Q0 docid rank score tag`) as columns; raises InputError naming file and line
    for a line without 6 fields, a score that is not a number, or a document listed twice for a topic."""
    name = str(path)
    columns = split_columns(_read_bytes(path), name, 6, (0, 2, 4), RUN_FIELDS, extra_ok=True)
    lines = columns.lines
    scores = _numbers(columns.fields[4], lines, name, np.float64, "score", "a number")
    topics, bounds, lines, docs, scores = _group_by_topic(columns.fields[0], lines, name, columns.fields[2], scores)
    hashes = id_hashes(docs)
    if _maybe_duplicates(hashes, bounds):
        for i, topic in enumerate(topics):
            segment = docs[bounds[i] : bounds[i + 1]].tolist()
            seen: set[bytes] = set()
            for offset, doc in enumerate(segment):
                if doc in seen:
                    line = int(lines[bounds[i] + offset])
                    shown = doc.decode("utf-8", "replace")
                    raise InputError(name, line, f"document {shown!r} is listed twice for topic {topic!r}")
                seen.add(doc)
    return RunColumns(topics, bounds, docs, scores, lines, hashes)


def read_run(path: str | Path) -> Run:
    """Read a TREC run file into {topic: {docid: score}}; raises InputError naming file and line."""
    name = str(path)
    columns = read_run_columns(path)
    run: Run = {}
    for i, topic in enumerate(columns.topics):
        start, stop = int(columns.bounds[i]), int(columns.bounds[i + 1])
        docs = _texts(columns.docs[start:stop], columns.lines[start:stop], name, "docid")
        run[topic] = dict(zip(docs, columns.scores[start:stop].tolist(), strict=True))
    return run
