"""From split fields to values: ids decoded as UTF-8, scores and grades parsed as numbers (exactly as strtod
and int() read them), rows grouped by topic, ids hashed for the joins.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..metrics import topic_keys

ROW_BLOCK = 1 << 16  # rows per block of the blocked loops: their temporaries stay in the CPU cache


def blocked_id_hashes(ids: np.ndarray) -> np.ndarray:
    """`metrics.id_hashes(ids)` (the same values; the joins compare the two), a block of rows at a time."""
    width = -(-max(ids.dtype.itemsize, 1) // 8) * 8
    if ids.dtype.itemsize != width:
        ids = ids.astype(f"S{width}")
    words = np.ascontiguousarray(ids).view("<u8").reshape(ids.size, width // 8)
    out = np.empty(ids.size, dtype=np.uint64)
    multiplier, shift = np.uint64(0xBF58476D1CE4E5B9), np.uint64(31)
    for start in range(0, ids.size, ROW_BLOCK):
        block = words[start : start + ROW_BLOCK]
        h = out[start : start + ROW_BLOCK]
        h[:] = 0x9E3779B97F4A7C15
        mixed = np.empty_like(h)
        for j in range(block.shape[1]):
            word = block[:, j]
            np.bitwise_xor(h, word, out=mixed)
            mixed *= multiplier
            mixed ^= mixed >> shift
            np.copyto(h, mixed, where=word != 0)
    return out


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


def parse_numbers(texts: np.ndarray, lines: np.ndarray, path: str, dtype, what: str, kind: str) -> np.ndarray:
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


def group_by_topic(topic_texts, lines: np.ndarray, path: str, *arrays: np.ndarray):
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


def maybe_duplicates(hashes: np.ndarray, bounds: np.ndarray) -> bool:
    """False when no topic lists a document twice; True means "look closer" (equal hash keys)."""
    owner = np.repeat(np.arange(bounds.size - 1), np.diff(bounds))
    keys = np.sort(topic_keys(hashes, owner))
    return bool((keys[1:] == keys[:-1]).any())


def texts(raw: np.ndarray, lines: np.ndarray, path: str, what: str) -> list[str]:
    """Decode a numpy 'S' array of UTF-8 ids to str, vectorized when it is all ASCII."""
    if raw.size and raw.view(np.uint8).max() < 128:
        return raw.astype(f"U{raw.dtype.itemsize}").tolist()
    return [
        _decode(item, path, int(line), what) for item, line in zip(raw.tolist(), lines.tolist(), strict=True)
    ]
