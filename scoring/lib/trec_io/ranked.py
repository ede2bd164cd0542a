"""`read_ranked`: a run read and ranked against the qrels in one go, what `python -m scoring eval` uses.

The result is `metrics.rank_columns`' (trec_eval's order: score descending, ties by docid descending); the
run's topics are laid out as the rows of one matrix so that the sorts are of short rows that stay in the CPU
cache.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..metrics import SCORE_DTYPE, RankedGrades, id_hashes, rank_columns, scatter_grades, score_order_keys
from .fields import ROW_BLOCK
from .qrels import QrelsColumns
from .run import RunColumns, check_listed_once, file_run_columns


def start_reading_run(path: str | Path) -> Future:
    """Read a run's columns for `read_ranked` on a thread of its own, so that the qrels can be read
    meanwhile (arrow and numpy work outside the GIL). Its errors are raised by `read_ranked`, after any
    of the qrels, as when the files are read one after the other."""
    executor = ThreadPoolExecutor(max_workers=1)
    pending = executor.submit(file_run_columns, path)
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
    run = pending.result() if pending is not None else file_run_columns(run_path)
    ranked = _rank_by_rows(qrels, run, all_topics)
    if ranked is not None:
        return ranked
    check_listed_once(run, name)
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
    keys = _KeyLayout(u64(64 - row_bits), u64(row_bits + position_bits), u64(position_bits), width)
    table = _sorted_row_keys(run, sizes, keys)
    if table is None:
        return None  # a document listed twice (an error), or two ids sharing a hash prefix

    judged_at = {topic: i for i, topic in enumerate(qrels.topics)}
    topics = sorted(judged_at) if all_topics else sorted(t for t in run.topics if t in judged_at)
    row_of = {topic: row for row, topic in enumerate(topics)}
    judged = _judged_grades(qrels, row_of)
    segment_row = np.array([row_of.get(t, -1) for t in run.topics], dtype=np.int64)
    lengths = np.zeros(len(topics), dtype=np.int64)
    lengths[segment_row[segment_row >= 0]] = sizes[segment_row >= 0]
    depth = int(lengths.max()) if lengths.size else 0

    joined = _join(qrels, run, row_of, table, sizes, keys)
    if joined is None:
        return None  # two judged ids of a topic share a hash prefix
    hits, match = joined
    owner, ranks = _hit_ranks(run, hits, sizes, width)
    grades = scatter_grades(segment_row[owner], ranks, qrels.grades[match], (len(topics), depth))
    return RankedGrades(topics, grades, judged, lengths)


@dataclass(frozen=True)
class _KeyLayout:
    """Where the parts of a row's sort key sit: the segment from bit `row_shift` up, the hash prefix (the
    hash shifted right by `prefix_shift`) from bit `low` up, the position in the segment below `low`."""

    row_shift: np.uint64
    prefix_shift: np.uint64
    low: np.uint64
    width: int  # the longest segment, the width of a row of the key table


def _sorted_row_keys(run: RunColumns, sizes: np.ndarray, keys: _KeyLayout) -> np.ndarray | None:
    """The (segments, width) table of the run rows' sort keys, each row sorted, or None when two keys of a
    segment share their hash prefix."""
    u64 = np.uint64
    row_shift, prefix_shift, low, width = keys.row_shift, keys.prefix_shift, keys.low, keys.width
    n_segments, n = sizes.size, int(run.bounds[-1])
    hashes = run.hashes if run.hashes is not None else id_hashes(run.docs)
    row_heads = np.arange(n_segments, dtype=u64) << row_shift
    in_row = np.arange(width, dtype=u64)
    rectangular = n == n_segments * width  # every topic lists as many documents: rows need no padding
    padding = row_heads | ((u64(1) << row_shift) - u64(1))  # sorts after every real key of its row
    table = np.empty((n_segments, width), dtype=u64)
    rows = max(1, ROW_BLOCK // width)
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
            return None
    return table


def _judged_grades(qrels: QrelsColumns, row_of: dict[str, int]) -> np.ndarray:
    """The grades of each evaluated topic's judged documents, a row per topic (`RankedGrades.judged`)."""
    judged_sizes = np.diff(qrels.bounds)
    judged_row = np.repeat(np.array([row_of.get(t, -1) for t in qrels.topics], dtype=np.int64), judged_sizes)
    kept = np.flatnonzero(judged_row >= 0)
    judged_position = np.arange(judged_row.size) - np.repeat(qrels.bounds[:-1], judged_sizes)
    judged_width = int(judged_position[kept].max()) + 1 if kept.size else 0
    return scatter_grades(
        judged_row[kept], judged_position[kept], qrels.grades[kept], (len(row_of), judged_width)
    )


def _join(
    qrels: QrelsColumns,
    run: RunColumns,
    row_of: dict[str, int],
    table: np.ndarray,
    sizes: np.ndarray,
    keys: _KeyLayout,
) -> tuple[np.ndarray, np.ndarray] | None:
    """(the run row of each judged document found in the run, its qrels row): each judged document of an
    evaluated topic looks for its key prefix in its segment's row. None when two judged ids of a topic
    share a hash prefix."""
    u64 = np.uint64
    row_shift, prefix_shift, low, width = keys.row_shift, keys.prefix_shift, keys.low, keys.width
    segment_at = {topic: i for i, topic in enumerate(run.topics)}
    judged_sizes = np.diff(qrels.bounds)
    segments = [segment_at.get(t, -1) if t in row_of else -1 for t in qrels.topics]
    judged_segment = np.repeat(np.array(segments, dtype=np.int64), judged_sizes)
    probe = np.flatnonzero(judged_segment >= 0)
    judged_hashes = qrels.hashes if qrels.hashes is not None else id_hashes(qrels.docs)
    segment = judged_segment[probe]
    wanted = (segment.astype(u64) << row_shift) | ((judged_hashes[probe] >> prefix_shift) << low)
    ordered = np.sort(wanted)
    if (ordered[1:] == ordered[:-1]).any():
        return None
    flat = table.ravel()
    where = np.minimum(np.searchsorted(flat, wanted), flat.size - 1) if flat.size else np.zeros(0, np.int64)
    found = flat[where]
    candidate = np.flatnonzero(((found >> low) == (wanted >> low)) & (where % width < sizes[segment]))
    hits = run.bounds[segment[candidate]] + (found[candidate] & ((u64(1) << low) - u64(1))).astype(np.int64)
    match = probe[candidate]
    confirmed = qrels.docs[match] == run.docs[hits]  # a shared prefix whose ids differ is no judgment
    return hits[confirmed], match[confirmed]


def _hit_ranks(
    run: RunColumns, hits: np.ndarray, sizes: np.ndarray, width: int
) -> tuple[np.ndarray, np.ndarray]:
    """(the segment of each hit, its rank in it): the documents above it in its topic, then its tied ones
    with a greater id (trec_eval's order)."""
    u64 = np.uint64
    n_segments, n = sizes.size, int(run.bounds[-1])
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
        in_order = ordered.ravel()
        above = np.searchsorted(in_order, keys[hits], side="right")
        below = np.searchsorted(in_order, keys[hits], side="left")
        ranks = (owner + 1) * width - above
        tied_hits = np.flatnonzero(above - below > 1)
    for k in tied_hits.tolist():
        hit = hits[k]
        start, stop = run.bounds[owner[k]], run.bounds[owner[k] + 1]
        tied = start + np.flatnonzero(scores[start:stop] == scores[hit])
        ranks[k] = int(np.count_nonzero(scores[start:stop] > scores[hit]))
        ranks[k] += int(np.count_nonzero(run.docs[tied] > run.docs[hit]))
    return owner, ranks
