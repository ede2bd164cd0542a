"""Splitting a whole TREC file into whitespace-separated fields, before any of them is read as a value.

Format: one record a line, fields separated by runs of whitespace (bytes <= 0x20: C's isspace, and the NUL
that cannot be part of an id), blank lines skipped; a line with another number of fields is an error naming
it.
The numpy splitter works on whole chunks of the file (a run of 10 million lines in seconds rather than a
minute of per-line Python). A plain file (single spaces, single newlines: `_plain_newlines`) of at least
`_ARROW_MIN_BYTES` is tokenized by pyarrow's multithreaded CSV reader instead, when it is installed; anything
else, and every error, goes through numpy, so results and messages are the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError

# Bytes per numpy pass: big enough that the per-chunk overhead vanishes, small enough that the temporary
# arrays (a few times the chunk) stay far below the size of the file.
_CHUNK = 1 << 22


def read_bytes(path: str | Path) -> bytes:
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


def arrow_table(data: bytes, count: int, types: dict):
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


def binary(pa):
    return pa.binary()


def float64(pa):
    return pa.float64()


def _arrow_split(data: bytes, count: int, wanted: tuple[int, ...]) -> Columns | None:
    """`split_columns` of a plain file by arrow, or None (see `arrow_table`)."""
    table = arrow_table(data, count, {k: binary for k in wanted})
    if table is None:
        return None
    fields = {k: arrow_bytes(table.column(f"f{k}")) for k in wanted}
    return Columns(fields, np.arange(1, table.num_rows + 1, dtype=np.int64))


def arrow_float64(column) -> np.ndarray | None:
    """An arrow float64 column as numpy, read from its buffers (pyarrow's to_numpy imports pandas: 0.19 s of
    a 0.75 s eval); None when a value is missing (the caller's own parser then names its line)."""
    parts = []
    for chunk in column.chunks:
        if chunk.null_count:
            return None
        values = np.frombuffer(chunk.buffers()[1], dtype=np.float64)
        parts.append(values[chunk.offset : chunk.offset + len(chunk)])
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float64)


def arrow_bytes(column) -> np.ndarray:
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


def _concat_bytes(arrays: list[np.ndarray]) -> np.ndarray:
    if not arrays:
        return np.zeros(0, dtype="S1")
    width = max(a.dtype.itemsize for a in arrays)
    return np.concatenate([a if a.dtype.itemsize == width else a.astype(f"S{width}") for a in arrays])
