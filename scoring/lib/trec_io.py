"""Readers for TREC files. Each reads the whole file before returning, so a bad line means no partial result.

The file readers split whole files with numpy (a run of 10 million lines is read in seconds rather than a
minute of per-line Python); `parse_qrels_lines` stays the simple per-line reference for small inputs.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import InputError
from .metrics import (
    SCORE_DTYPE,
    RankedGrades,
    id_hashes,
    rank_columns,
    scatter_grades,
    score_order_keys,
    topic_keys,
)

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
            raise InputError(
                path,
                number,
                f"document {doc!r} of topic {topic!r} is judged twice ({judged[doc]} and {grade})",
            )
        judged[doc] = grade
    return qrels


def _read_bytes(path: str | Path) -> bytes:
    # Read, not memory-mapped: a map of a file that another process truncates meanwhile would crash the
    # process (SIGBUS) instead of reading what was there.
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
    Bytes <= 0x20 count as whitespace (C's isspace, and the NUL that cannot be part of an id).

    A plain file (see `_arrow_split`) is tokenized by pyarrow's CSV reader when it is installed; anything
    else, and every error, goes through the numpy splitter below, so results and messages are the same."""
    fast = _arrow_split(data, count, wanted)
    if fast is not None:
        return fast
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
                path,
                base_line + line + 1,
                f"expected {at_least}{count} fields ({names}), found {per_line[line]}",
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


def _plain_newlines(data: bytes) -> int | None:
    """The number of newlines of a plain file, or None when it is not plain: a byte below 0x20 other than
    the newline (a tab, a carriage return, a NUL...), two whitespace bytes in a row (an empty field or a
    blank line), whitespace first or a space last, or a byte-order mark (which arrow would skip).

    In a plain file the fields are separated by single spaces and the lines by single newlines, so arrow's
    split on one space is the numpy splitter's split on runs of whitespace (arrow refusing a line with
    another number of fields)."""
    if not len(data) or data[0] <= 32 or data[-1] == 32 or data[:3] == b"\xef\xbb\xbf":
        return None
    buffer = np.frombuffer(data, dtype=np.uint8)
    newlines = 0
    for start in range(0, buffer.size, _CHUNK):
        chunk = buffer[start : start + _CHUNK + 1]  # one byte more: a pair across the boundary
        space = chunk <= 32
        if (space[1:] & space[:-1]).any():
            return None
        chunk = chunk[:_CHUNK]
        lines = int(np.count_nonzero(chunk == 10))
        if np.count_nonzero(chunk < 32) != lines:
            return None  # a tab, a carriage return or another control byte
        newlines += lines
    return newlines


# Files smaller than this are split by numpy: importing pyarrow costs more than it saves.
_ARROW_MIN_BYTES = 1 << 20


def _arrow_table(data: bytes, count: int, types: dict):
    """Columns `types` ({field number: arrow type}) of a plain file (`_plain_newlines`) by pyarrow's
    multithreaded CSV reader, or None when pyarrow is missing, the file is small or not plain, or a line
    has another number of fields or a value does not convert (the numpy path then gives the same result
    or the error naming the line)."""
    if len(data) < _ARROW_MIN_BYTES:
        return None
    newlines = _plain_newlines(data)
    if newlines is None:
        return None
    try:
        import pyarrow as pa
        import pyarrow.csv as csv
    except ImportError:
        return None
    names = [f"f{k}" for k in range(count)]
    try:
        table = csv.read_csv(
            pa.py_buffer(data),
            memory_pool=pa.system_memory_pool(),  # malloc's: mimalloc's fresh pages cost 2-3x the system time
            read_options=csv.ReadOptions(column_names=names, block_size=1 << 23),
            parse_options=csv.ParseOptions(
                delimiter=" ",
                quote_char=False,
                double_quote=False,
                escape_char=False,
                ignore_empty_lines=False,
            ),
            convert_options=csv.ConvertOptions(
                column_types={names[k]: kind(pa) for k, kind in types.items()},
                include_columns=[names[k] for k in sorted(types)],
                strings_can_be_null=False,
                null_values=[],
                true_values=[],
                false_values=[],
            ),
        )
    except pa.ArrowException:
        return None
    return table if newlines == table.num_rows - (data[-1] != 10) else None  # one row a line


def _binary(pa):
    return pa.binary()


def _float64(pa):
    return pa.float64()


def _arrow_split(data: bytes, count: int, wanted: tuple[int, ...]) -> Columns | None:
    """`split_columns` of a plain file by arrow, or None (see `_arrow_table`)."""
    table = _arrow_table(data, count, {k: _binary for k in wanted})
    if table is None:
        return None
    fields = {k: _arrow_bytes(table.column(f"f{k}")) for k in wanted}
    return Columns(fields, np.arange(1, table.num_rows + 1, dtype=np.int64))


def _arrow_bytes(column) -> np.ndarray:
    """An arrow binary column as a numpy 'S' array (width a multiple of 8), as `_field_bytes` gives it."""
    pieces = []
    for chunk in column.chunks:
        _validity, offsets, values = chunk.buffers()
        starts = np.frombuffer(offsets, dtype=np.int32)[chunk.offset : chunk.offset + len(chunk) + 1].astype(
            np.int64
        )
        lengths = np.diff(starts)
        if lengths.size:
            pieces.append((np.frombuffer(values, dtype=np.uint8)[: starts[-1]], starts, lengths))
    widest = max((int(lengths.max()) for _raw, _starts, lengths in pieces), default=1)
    width = max(-(-widest // 8), 1) * 8
    out = np.empty(sum(lengths.size for _raw, _starts, lengths in pieces), dtype=f"S{width}")
    at = 0
    for raw, starts, lengths in pieces:
        rows = out[at : at + lengths.size]
        at += lengths.size
        longest = int(lengths.max())
        if int(lengths.min()) == longest:  # ids of one length: strided 8-byte copies, no index arrays
            words = rows.view("<u8").reshape(lengths.size, width // 8)
            # A word may run past the last id: the last few rows read from a padded copy of their own.
            tail = min(lengths.size, 9)
            body = lengths.size - tail
            ends = np.concatenate((raw[starts[body] :], np.zeros(16, dtype=np.uint8)))
            for j in range(width // 8):
                words[:body, j] = np.ndarray(
                    (body,), dtype="<u8", buffer=raw, offset=int(starts[0]) + 8 * j, strides=(longest,)
                )
                words[body:, j] = np.ndarray(
                    (tail,), dtype="<u8", buffer=ends, offset=8 * j, strides=(longest,)
                )
                if longest < 8 * (j + 1):  # the id ends inside this word: keep only its own (low) bytes
                    words[:, j] &= _KEEP_LOW_BYTES[longest - 8 * j]
        else:
            padded = np.concatenate((raw, np.zeros(width + 16, dtype=np.uint8)))
            words = _field_bytes(padded, starts[:-1], lengths)
            rows[:] = words if words.dtype.itemsize == width else words.astype(f"S{width}")
    return out


_BLOCK = 1 << 16  # rows per block of the blocked loops: their temporaries stay in the CPU cache


def _id_hashes(ids: np.ndarray) -> np.ndarray:
    """`metrics.id_hashes(ids)` (the same values; the joins compare the two), a block of rows at a time."""
    width = -(-max(ids.dtype.itemsize, 1) // 8) * 8
    if ids.dtype.itemsize != width:
        ids = ids.astype(f"S{width}")
    words = np.ascontiguousarray(ids).view("<u8").reshape(ids.size, width // 8)
    out = np.empty(ids.size, dtype=np.uint64)
    multiplier, shift = np.uint64(0xBF58476D1CE4E5B9), np.uint64(31)
    for start in range(0, ids.size, _BLOCK):
        block = words[start : start + _BLOCK]
        h = out[start : start + _BLOCK]
        h[:] = 0x9E3779B97F4A7C15
        mixed = np.empty_like(h)
        for j in range(block.shape[1]):
            word = block[:, j]
            np.bitwise_xor(h, word, out=mixed)
            mixed *= multiplier
            mixed ^= mixed >> shift
            np.copyto(h, mixed, where=word != 0)
    return out


def _arrow_segments(column) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_segments` of an arrow binary column, with the text of each segment's first row (numpy bytes)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = column.combine_chunks()
    n = len(column)
    change = pc.not_equal(column.slice(1), column.slice(0, max(n - 1, 0))).to_numpy(zero_copy_only=False)
    heads = np.concatenate(([0], np.flatnonzero(change) + 1)) if n else np.zeros(0, dtype=np.int64)
    lengths = np.diff(np.concatenate((heads, [n])))
    return heads, lengths, np.array(column.take(pa.array(heads)).to_pylist(), dtype="S")


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
        elif dtype is np.int64 and texts.size:  # plain [+-]digits through the float parser, exact below 2^53
            parsed, ok = _fast_floats(texts)
            ok &= ~(texts.view(np.uint8).reshape(texts.size, -1) == 46).any(axis=1)  # no decimal point
            values = parsed.astype(np.int64)
            if not ok.all():
                values[~ok] = texts[~ok].astype(np.int64)
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


def _group_by_topic(topic_texts, lines: np.ndarray, path: str, *arrays: np.ndarray):
    """Group rows by topic (topics in order of first appearance, rows of a topic in file order).
    Returns (topics, bounds, lines, *arrays), bounds[i]:bounds[i+1] being topic i's rows.
    topic_texts: a numpy 'S' array, or (heads, lengths, head_texts) of its runs of equal topics."""
    if isinstance(topic_texts, tuple):
        heads, lengths, head_texts = topic_texts
    else:
        heads, lengths = _segments(topic_texts)
        head_texts = topic_texts[heads]
    labels = [
        _decode(text, path, int(lines[h]), "topic")
        for text, h in zip(head_texts, heads.tolist(), strict=True)
    ]
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
    topics, bounds, lines, docs, grades = _group_by_topic(
        columns.fields[0], columns.lines, name, columns.fields[2], grades
    )
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
                        name,
                        int(lines[again]),
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
    return [
        _decode(item, path, int(line), what) for item, line in zip(raw.tolist(), lines.tolist(), strict=True)
    ]


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
    run = _run_columns(_read_bytes(path), name)
    _check_listed_once(run, name)
    return run


def _run_columns(data: bytes, name: str) -> RunColumns:
    """The run's columns, every check made but that no document is listed twice for a topic."""
    table = _arrow_table(data, 6, {0: _binary, 2: _binary, 4: _float64})
    if table is not None:
        scores = table.column("f4").to_numpy()
        if not np.isnan(scores).any():  # a NaN is refused below, with its line
            lines = np.arange(1, table.num_rows + 1, dtype=np.int64)  # a plain file has no blank line
            docs = _arrow_bytes(table.column("f2"))
            topics, bounds, lines, docs, scores = _group_by_topic(
                _arrow_segments(table.column("f0")), lines, name, docs, scores
            )
            return RunColumns(topics, bounds, docs, scores, lines, _id_hashes(docs))
    columns = split_columns(data, name, 6, (0, 2, 4), RUN_FIELDS, extra_ok=True)
    lines = columns.lines
    scores = _numbers(columns.fields[4], lines, name, np.float64, "score", "a number")
    topics, bounds, lines, docs, scores = _group_by_topic(
        columns.fields[0], lines, name, columns.fields[2], scores
    )
    return RunColumns(topics, bounds, docs, scores, lines, id_hashes(docs))


def _check_listed_once(run: RunColumns, name: str) -> None:
    if not _maybe_duplicates(run.hashes, run.bounds):
        return
    for i, topic in enumerate(run.topics):
        segment = run.docs[run.bounds[i] : run.bounds[i + 1]].tolist()
        seen: set[bytes] = set()
        for offset, doc in enumerate(segment):
            if doc in seen:
                line = int(run.lines[run.bounds[i] + offset])
                shown = doc.decode("utf-8", "replace")
                raise InputError(name, line, f"document {shown!r} is listed twice for topic {topic!r}")
            seen.add(doc)


def start_reading_run(path: str | Path) -> Future:
    """Read a run's columns for `read_ranked` on a thread of its own, so that the qrels can be read
    meanwhile (arrow and numpy work outside the GIL). Its errors are raised by `read_ranked`, after any
    of the qrels, as when the files are read one after the other."""
    executor = ThreadPoolExecutor(max_workers=1)
    pending = executor.submit(lambda: _run_columns(_read_bytes(path), str(path)))
    executor.shutdown(wait=False)
    return pending


def read_ranked(
    qrels: QrelsColumns, run_path: str | Path, all_topics: bool = False, pending: Future | None = None
) -> RankedGrades:
    """`metrics.rank_columns(qrels, read_run_columns(run_path), all_topics)`, the same result and the same
    errors, in fewer passes: what `python -m scoring eval` uses.

    The run's topics are laid out as the rows of one matrix (a row per topic, as wide as the longest list),
    so that the sorts that check for repeated documents, join the judgments and rank the scores are sorts of
    short rows that stay in the CPU cache. A run too ragged for that, or with two ids of a topic whose
    hashes share a prefix, takes the general path. `pending`: the run already being read
    (`start_reading_run(run_path)`)."""
    name = str(run_path)
    run = pending.result() if pending is not None else _run_columns(_read_bytes(run_path), name)
    ranked = _rank_by_rows(qrels, run, all_topics)
    if ranked is not None:
        return ranked
    _check_listed_once(run, name)
    return rank_columns(qrels, run, all_topics)


def _rank_by_rows(qrels: QrelsColumns, run: RunColumns, all_topics: bool) -> RankedGrades | None:
    """`rank_columns` for a run with no document listed twice, or None for the general path (a repeated
    document or a hash prefix shared within a topic, a ragged run, too many topics or ranks)."""
    sizes = np.diff(run.bounds)
    n_segments, n = sizes.size, int(run.bounds[-1])
    width = int(sizes.max()) if n else 0
    if not n or n_segments * width > 2 * n + 4096:
        return None
    # A sort key per run row: segment (high bits), a prefix of the id's hash, the row's position in its
    # segment (low bits), so that equal prefixes still give distinct keys and the position comes back.
    row_bits, position_bits = max(1, (n_segments - 1).bit_length()), max(1, (width - 1).bit_length())
    if 64 - row_bits - position_bits < 32:
        return None
    u64 = np.uint64
    row_shift, prefix_shift, low = u64(64 - row_bits), u64(row_bits + position_bits), u64(position_bits)
    hashes = run.hashes if run.hashes is not None else id_hashes(run.docs)
    row_heads = np.arange(n_segments, dtype=u64) << row_shift
    in_row = np.arange(width, dtype=u64)
    rectangular = n == n_segments * width  # every topic lists as many documents: rows need no padding
    padding = row_heads | ((u64(1) << row_shift) - u64(1))  # sorts after every real key of its row
    table = np.empty((n_segments, width), dtype=u64)
    rows = max(1, _BLOCK // width)
    for start in range(0, n_segments, rows):  # a block of rows at a time, built, sorted, checked in cache
        stop = min(start + rows, n_segments)
        block = table[start:stop]
        first, last = int(run.bounds[start]), int(run.bounds[stop])
        if rectangular:
            np.right_shift(hashes[first:last].reshape(stop - start, width), prefix_shift, out=block)
            block <<= low
            block |= in_row
        else:
            block[:] = padding[start:stop, None]
            at = np.arange(first, last) - np.repeat(run.bounds[start:stop], sizes[start:stop])
            where = np.repeat(np.arange(stop - start) * width, sizes[start:stop]) + at
            block.ravel()[where] = ((hashes[first:last] >> prefix_shift) << low) | in_row[at]
        block |= row_heads[start:stop, None]
        block.sort(axis=1)
        shared = ((block[:, 1:] ^ block[:, :-1]) >> low) == 0
        if shared.any() and (shared & (np.arange(1, width) < sizes[start:stop, None])).any():
            return None  # a document listed twice (an error), or two ids sharing a hash prefix

    judged_at = {topic: i for i, topic in enumerate(qrels.topics)}
    topics = sorted(judged_at) if all_topics else sorted(t for t in run.topics if t in judged_at)
    row_of = {topic: row for row, topic in enumerate(topics)}
    segment_at = {topic: i for i, topic in enumerate(run.topics)}
    judged_sizes = np.diff(qrels.bounds)
    judged_row = np.repeat(np.array([row_of.get(t, -1) for t in qrels.topics], dtype=np.int64), judged_sizes)
    kept = np.flatnonzero(judged_row >= 0)
    judged_position = np.arange(judged_row.size) - np.repeat(qrels.bounds[:-1], judged_sizes)
    judged_width = int(judged_position[kept].max()) + 1 if kept.size else 0
    judged = scatter_grades(
        judged_row[kept], judged_position[kept], qrels.grades[kept], (len(topics), judged_width)
    )
    segment_row = np.array([row_of.get(t, -1) for t in run.topics], dtype=np.int64)
    lengths = np.zeros(len(topics), dtype=np.int64)
    lengths[segment_row[segment_row >= 0]] = sizes[segment_row >= 0]
    depth = int(lengths.max()) if lengths.size else 0

    # Join: each judged document of an evaluated topic looks for its key prefix in its segment's row.
    segments = [segment_at.get(t, -1) if t in row_of else -1 for t in qrels.topics]
    judged_segment = np.repeat(np.array(segments, dtype=np.int64), judged_sizes)
    probe = np.flatnonzero(judged_segment >= 0)
    judged_hashes = qrels.hashes if qrels.hashes is not None else id_hashes(qrels.docs)
    segment = judged_segment[probe]
    wanted = (segment.astype(u64) << row_shift) | ((judged_hashes[probe] >> prefix_shift) << low)
    ordered = np.sort(wanted)
    if (ordered[1:] == ordered[:-1]).any():
        return None  # two judged ids of a topic share a hash prefix
    flat = table.ravel()
    where = np.minimum(np.searchsorted(flat, wanted), flat.size - 1) if flat.size else np.zeros(0, np.int64)
    found = flat[where]
    candidate = np.flatnonzero(((found >> low) == (wanted >> low)) & (where % width < sizes[segment]))
    hits = run.bounds[segment[candidate]] + (found[candidate] & ((u64(1) << low) - u64(1))).astype(np.int64)
    match = probe[candidate]
    confirmed = qrels.docs[match] == run.docs[hits]  # a shared prefix whose ids differ is no judgment
    hits, match = hits[confirmed], match[confirmed]

    # Ranks: the documents above a hit in its topic, then its tied ones with a greater id (trec_eval's order).
    owner = np.searchsorted(run.bounds, hits, side="right") - 1  # the segment of each hit
    scores = run.scores.astype(SCORE_DTYPE)  # compared as trec_eval's C floats (-0.0 ties +0.0)
    inside = np.ones(max(n - 1, 0), dtype=bool)  # pairs of neighbouring rows of one segment
    inside[run.bounds[1:-1] - 1] = False
    if (scores[1:] <= scores[:-1])[inside].all():
        # Listed best first, as runs usually are: a hit's rank is its position, but within a tie.
        ranks = hits - run.bounds[owner]
        tied = np.zeros(n, dtype=bool)
        tied[1:] = inside & (scores[1:] == scores[:-1])
        tied[:-1] |= tied[1:]
        tied_hits = np.flatnonzero(tied[hits])
    else:
        keys = score_order_keys(run.scores, np.repeat(np.arange(n_segments), sizes))
        ordered = np.empty((n_segments, width), dtype=u64)
        ordered[:] = (np.arange(n_segments, dtype=u64) << u64(32))[:, None]  # padding sorts first
        cell = np.arange(n) + np.repeat(np.arange(n_segments) * width - run.bounds[:-1], sizes)
        ordered.ravel()[cell] = keys
        ordered.sort(axis=1)
        ordered = ordered.ravel()
        above = np.searchsorted(ordered, keys[hits], side="right")
        below = np.searchsorted(ordered, keys[hits], side="left")
        ranks = (owner + 1) * width - above
        tied_hits = np.flatnonzero(above - below > 1)
    for k in tied_hits.tolist():
        hit = hits[k]
        start, stop = run.bounds[owner[k]], run.bounds[owner[k] + 1]
        tied = start + np.flatnonzero(scores[start:stop] == scores[hit])
        ranks[k] = int(np.count_nonzero(scores[start:stop] > scores[hit]))
        ranks[k] += int(np.count_nonzero(run.docs[tied] > run.docs[hit]))
    grades = scatter_grades(segment_row[owner], ranks, qrels.grades[match], (len(topics), depth))
    return RankedGrades(topics, grades, judged, lengths)


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
