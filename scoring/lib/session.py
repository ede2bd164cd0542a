"""Session-based DCG (sDCG) of Järvelin, Price, Delcambre & Nielsen (ECIR 2008): pure numpy, no Django.

A whole batch of sessions is scored in a few array passes. The caller first encodes its sessions once
(`encode_sessions`: strings to integer arrays), then scores the batch with any `SessionParams`
(`score_sessions`), or with a grid of log bases (`session_grid`) that reuses the gains.

Layout. Query q of a session contributes one *segment* to the concatenated session vector: the top X of its
list (padded with zeros to X under `short_lists="pad"`, as it is under `"as_is"`; under `scan="observed"` its
own scanned depth takes the place of X). The element for rank i of query q is
G_q[i] * rank_discount(i) * query_discount(q); the curve is the running sum over the concatenation. The ideal
curve has the same layout, segment q being the scenario's ideal vector cut to the same length, so the two
curves can be divided element by element; under the defaults (pad, fixed) it is exactly the ideal top-X vector
repeated n times that the SPEC describes. See docs/scoring-sessions.md.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import chain, count

import numpy as np

from .metrics import grade_gains, ideal_gains, rank_discount

FORMULATIONS = ("2008", "2002", "log2", "kanoulas2011")
DUPLICATES = ("every", "first")
SHORT_LISTS = ("pad", "as_is")
SCANS = ("fixed", "observed")
SUMMARIES = ("final", "normalized_final", "last_query", "best_query", "average")
_NO_GRADE = np.iinfo(np.int64).min  # encode_sessions' marker for an unjudged document
# Sessions are turned into curves a block at a time, about this many cells per (S, W) matrix (1 MiB of float64),
# so that a block's curve, ideal and normalized rows are still in the CPU cache from one step to the next.
_BLOCK_CELLS = 1 << 17
# Batches smaller than this many sessions are built on one thread (a thread costs more than it saves).
_PARALLEL_SESSIONS = 20_000


def _parallel_ranges(n_sessions: int, step: int) -> list[tuple[int, int]]:
    """The session ranges built on separate threads: one per CPU (at most two) for a large batch."""
    workers = min(2, os.cpu_count() or 1) if n_sessions >= _PARALLEL_SESSIONS else 1
    middle = -(-n_sessions // workers // step) * step  # a block boundary
    return [(0, n_sessions)] if workers == 1 else [(0, middle), (middle, n_sessions)]


PAPER_WEIGHTS = (0.0, 1.0, 10.0, 100.0)  # ECIR 2008's sharp weighting of the grades 0..3


def default_weights(grades: Sequence[int]) -> tuple[float, ...]:
    """The default weights for a grade scale (one per grade 0..max): the paper's 0, 1, 10, 100 on 0..3, and on
    any other scale the same rule, each grade above the lowest worth ten times the one below it and the lowest
    (not relevant) worth 0: 0..4 gives 0, 1, 10, 100, 1000; 0..1 gives 0, 1; 1..4 gives 0, 0, 1, 10, 100.
    Negative grades are not steps of a scale (see docs/scoring-sessions.md, "Grades")."""
    steps = sorted({int(g) for g in grades if int(g) >= 0})
    if not steps:
        return PAPER_WEIGHTS
    lowest = steps[0]
    return tuple(0.0 if g <= lowest else 10.0 ** (g - lowest - 1) for g in range(steps[-1] + 1))


@dataclass(frozen=True)
class SessionParams:
    """The options of a session scoring run; the defaults are the ECIR 2008 paper's.

    `weights[g]` is the gain of grade g (ignored by `kanoulas2011`, whose gain is 2^g - 1). The curves are held
    constant after each session's end up to the longest session of the batch, or up to `pad_to` queries of
    `top` ranks if that is longer; a session longer than pad_to queries is an error.
    """

    weights: tuple[float, ...] = PAPER_WEIGHTS
    b: float = 2.0
    bq: float = 4.0
    top: int = 10
    formulation: str = "2008"
    duplicates: str = "every"
    short_lists: str = "pad"
    scan: str = "fixed"
    pad_to: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", tuple(float(w) for w in self.weights))
        if not self.weights:
            raise ValueError("weights must give the gain of at least one grade")
        _check_choice("formulation", self.formulation, FORMULATIONS)
        _check_choice("duplicates", self.duplicates, DUPLICATES)
        _check_choice("short_lists", self.short_lists, SHORT_LISTS)
        _check_choice("scan", self.scan, SCANS)
        _check_b(self.b)
        _check_bq(self.bq)
        if int(self.top) != self.top or self.top < 1:
            raise ValueError(f"top (the scanning length X) must be a whole number >= 1, got {self.top}")
        if self.pad_to is not None and (int(self.pad_to) != self.pad_to or self.pad_to < 1):
            raise ValueError(f"pad_to must be a whole number of queries >= 1, got {self.pad_to}")


@dataclass(frozen=True, eq=False)
class SessionBatch:
    """Sessions as integer arrays; build it with `encode_sessions`.

    Queries are stored session after session, in the order they were issued: S sessions, Q queries in all,
    each result list cut to D ranks (D = docs.shape[1]).
    - query_counts (S,): queries in each session (>= 1); topic (S,): index of its scenario.
    - docs (Q, D): document codes, -1 past the end of the list; grades (Q, D) with judged (Q, D): the
      reference grade of each document for its session's scenario, judged False for unjudged and empty cells.
    - scanned_to (Q,) or None: the deepest rank the participant viewed, -1 where not recorded.
    - recall_topic, recall_grade (J,): every judged document of the scenarios, for the ideal vectors.
    """

    query_counts: np.ndarray
    topic: np.ndarray
    docs: np.ndarray
    grades: np.ndarray
    judged: np.ndarray
    scanned_to: np.ndarray | None
    recall_topic: np.ndarray
    recall_grade: np.ndarray

    @property
    def n_sessions(self) -> int:
        return len(self.query_counts)


@dataclass(frozen=True, eq=False)
class SessionScores:
    """Per-session results of `score_sessions` (S sessions, Q queries, W curve positions).

    - per_query (Q,): each query's sDCG at its cut (DCG_q times its query discount), in the batch's query
      order; `per_query_of(s)` slices one session's vector.
    - final, ideal_final, normalized_final, last_query, best_query, average (S,). average is avg-pos over the
      curve up to the session's own end (its first `lengths[s]` values), so it does not change with the
      batch's padded width.
    - lengths (S,): the curve positions up to the session's own end (n * X under pad/fixed).
    - curve, ideal, normalized (S, W): the cumulated session curves, held constant after each session's end;
      None when scored with curves=False. normalized is 0 where the ideal is 0.
    """

    query_counts: np.ndarray
    lengths: np.ndarray
    per_query: np.ndarray
    final: np.ndarray
    ideal_final: np.ndarray
    normalized_final: np.ndarray
    last_query: np.ndarray
    best_query: np.ndarray
    average: np.ndarray
    curve: np.ndarray | None
    ideal: np.ndarray | None
    normalized: np.ndarray | None

    def per_query_of(self, session: int) -> np.ndarray:
        start = int(self.query_counts[:session].sum())
        return self.per_query[start : start + int(self.query_counts[session])]


@dataclass(frozen=True, eq=False)
class SessionGrid:
    """`session_grid` results: each summary is an array of shape (len(b), len(bq), S)."""

    b: np.ndarray
    bq: np.ndarray
    final: np.ndarray
    normalized_final: np.ndarray
    last_query: np.ndarray
    best_query: np.ndarray
    average: np.ndarray


def encode_sessions(
    topics: Sequence[str],
    results: Sequence[Sequence[Sequence[str]]],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    depth: int,
    scanned_to: Sequence[Sequence[int | None]] | None = None,
) -> SessionBatch:
    """Turn sessions into a `SessionBatch`: session s has scenario topics[s] and result lists results[s]
    (one list of document ids per query, in order), optionally each query's scanned depth.

    Only the first `depth` results of each list are kept, so depth must cover the deepest cut the batch
    will be scored at (top X, or the deepest scanned_to). A scenario absent from qrels has an empty recall base.
    """
    if len(results) != len(topics):
        raise ValueError(f"{len(topics)} topics for {len(results)} sessions")
    if depth < 1:
        raise ValueError(f"depth must be at least 1, got {depth}")
    counts = np.fromiter(map(len, results), dtype=np.int64, count=len(results))
    if (counts < 1).any():
        raise ValueError(f"session {int(np.argmin(counts))} has no queries; a session has at least one")
    topic_codes: dict[str, int] = {}
    for topic in topics:
        topic_codes.setdefault(topic, len(topic_codes))
    # The documents are met once each, by C loops (chain, dict.fromkeys, map); grades are looked up by
    # arrays of (scenario, document) codes rather than one dict lookup per shown document.
    lists = list(chain.from_iterable(results))
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    if lengths.size and lengths.max() > depth:
        lists = [ranked[:depth] for ranked in lists]
        lengths = np.minimum(lengths, depth)
    n_shown = int(lengths.sum())
    # Codes 0, 1, ... in order of first showing, in one C loop over the documents: a defaultdict whose
    # factory is a counter gives a new document the next code as it is met (half the time of numbering the
    # distinct documents first, then looking every shown one up).
    code_of: dict[str, int] = defaultdict(count().__next__)
    shown_codes = np.fromiter(
        map(code_of.__getitem__, chain.from_iterable(lists)), dtype=np.int64, count=n_shown
    )
    row = len(lengths)
    # The cells of the (Q, depth) matrices that hold a shown document: the first lengths[q] of row q. A
    # boolean mask visits them in row-major order, the order of shown_codes (cheaper than their indices).
    shown = np.arange(depth) < lengths[:, None]
    docs = np.full((row, depth), -1, dtype=np.int64)
    docs[shown] = shown_codes
    grades = np.full((row, depth), _NO_GRADE, dtype=np.int64)
    grades[shown] = _shown_grades(topics, counts, lengths, shown_codes, code_of, qrels, topic_codes)
    judged_mask = grades != _NO_GRADE  # an empty cell is unjudged too
    np.putmask(grades, ~judged_mask, 0)

    scanned = None
    if scanned_to is not None:
        seen = list(chain.from_iterable(scanned_to))
        if seen.count(None) == len(seen):  # none recorded (the CLI passes them all, mostly None)
            scanned = np.full(len(seen), -1, dtype=np.int64)
        else:
            scanned = np.fromiter(
                (-1 if depth_seen is None else depth_seen for depth_seen in seen),
                dtype=np.int64,
                count=len(seen),
            )
        if len(scanned) != row:
            raise ValueError(f"scanned_to gives {len(scanned)} depths for {row} queries")
    recall_topic: list[int] = []
    recall_grade: list[int] = []
    for topic, code in topic_codes.items():
        judged = qrels.get(topic, {})
        recall_topic.extend([code] * len(judged))
        recall_grade.extend(judged.values())
    return SessionBatch(
        query_counts=counts,
        topic=np.asarray([topic_codes[t] for t in topics], dtype=np.int64),
        docs=docs,
        grades=grades,
        judged=judged_mask,
        scanned_to=scanned,
        recall_topic=np.asarray(recall_topic, dtype=np.int64),
        recall_grade=np.asarray(recall_grade, dtype=np.int64),
    )


def _shown_grades(topics, counts, lengths, shown_codes, code_of, qrels, topic_codes) -> np.ndarray:
    """The grade of each shown document for its session's scenario (_NO_GRADE where unjudged), found by
    (scenario code, document code) keys among the judgments of the batch's scenarios."""
    judged_keys, judged_grades = [], []
    n_codes = len(code_of)
    for topic, code in topic_codes.items():
        for doc, grade in qrels.get(topic, {}).items():
            shown = code_of.get(doc)
            if shown is not None:
                judged_keys.append(code * n_codes + shown)
                judged_grades.append(grade)
    if not judged_keys:
        return np.full(shown_codes.size, _NO_GRADE, dtype=np.int64)
    session_topic = np.fromiter(map(topic_codes.__getitem__, topics), dtype=np.int64, count=len(topics))
    per_session = np.add.reduceat(lengths, np.cumsum(counts) - counts) if lengths.size else lengths
    keys = np.repeat(session_topic, per_session) * n_codes + shown_codes
    if len(topic_codes) * n_codes <= 2 * keys.size + (1 << 16):  # a dense (scenario, document) table
        table = np.full(len(topic_codes) * n_codes, _NO_GRADE, dtype=np.int64)
        table[np.asarray(judged_keys, dtype=np.int64)] = judged_grades
        return table[keys]
    order = np.argsort(judged_keys)
    judged = np.asarray(judged_keys, dtype=np.int64)[order]
    values = np.asarray(judged_grades, dtype=np.int64)[order]
    where = np.minimum(np.searchsorted(judged, keys), judged.size - 1)
    return np.where(judged[where] == keys, values[where], _NO_GRADE)


def score_sessions(
    batch: SessionBatch, params: SessionParams | None = None, *, curves: bool = True
) -> SessionScores:
    """Score every session of the batch (default params: the paper's); curves=False skips the (S, W)
    curve matrices."""
    params = params or SessionParams()
    prep = _Prepared(batch, params)
    rank_disc = _rank_discounts(prep.width, params.formulation, params.b)
    query_disc = _query_discounts(prep.max_queries, params.formulation, params.bq)
    summary = prep.summaries(rank_disc[:, None], query_disc[:, None])
    per_query = (prep.gains @ rank_disc) * query_disc[prep.qpos]

    curve = ideal = normalized = None
    if curves:
        # Held to the longest session's own length, or to pad_to queries of X ranks if that is longer.
        width = max((params.pad_to or 0) * params.top, int(prep.lengths.max()))
        curve, ideal, normalized = prep.curves(rank_disc, query_disc, width)
    return SessionScores(
        query_counts=batch.query_counts,
        lengths=prep.lengths,
        per_query=per_query,
        curve=curve,
        ideal=ideal,
        normalized=normalized,
        **{name: values[0, 0] for name, values in summary.items()},
    )


def session_grid(
    batch: SessionBatch,
    params: SessionParams | None = None,
    *,
    b_values: Sequence[float],
    bq_values: Sequence[float],
) -> SessionGrid:
    """The per-session summaries for every (b, bq) pair, the other options taken from params.

    Gains, duplicate masks and ideal vectors are computed once; all the b values together cost one
    (Q, D) x (D, 2 nb) matrix product and all the bq values products with (S, n) tables.
    """
    params = params or SessionParams()
    b_arr = np.asarray(b_values, dtype=np.float64)
    bq_arr = np.asarray(bq_values, dtype=np.float64)
    for b in b_arr:
        _check_b(b)
    for bq in bq_arr:
        _check_bq(bq)
    prep = _Prepared(batch, params)
    rank_disc = np.stack([_rank_discounts(prep.width, params.formulation, b) for b in b_arr], axis=1)
    query_disc = np.stack(
        [_query_discounts(prep.max_queries, params.formulation, bq) for bq in bq_arr], axis=1
    )
    summary = prep.summaries(rank_disc, query_disc)
    return SessionGrid(b=b_arr, bq=bq_arr, **{name: summary[name] for name in SUMMARIES})


def _rank_discounts(n: int, formulation: str, b: float) -> np.ndarray:
    if formulation == "kanoulas2011":
        # 1 / log_b(r + b - 1): 1 at rank 1, like the ECIR form, but a different curve after it.
        return np.log(b) / np.log(np.arange(1, n + 1, dtype=np.float64) + b - 1.0)
    return rank_discount(n, formulation, b)


def _query_discounts(n: int, formulation: str, bq: float) -> np.ndarray:
    q = np.arange(1, n + 1, dtype=np.float64)
    if formulation == "kanoulas2011":
        return np.log(bq) / np.log(q + bq - 1.0)
    return 1.0 / (1.0 + np.log(q) / np.log(bq))  # ECIR 2008 eq. (1)


class _Prepared:
    """Everything about a batch that does not depend on the log bases: gains, segments, ideal vectors.
    Every pass over the (Q, D) cells costs, so they are kept few (see bench/scoring_sessions.py)."""

    def __init__(self, batch: SessionBatch, params: SessionParams):
        counts = np.asarray(batch.query_counts, dtype=np.int64)
        if counts.ndim != 1 or len(counts) == 0 or (counts < 1).any():
            raise ValueError("a batch needs at least one session, and every session at least one query")
        n_queries, stored_depth = batch.docs.shape
        if counts.sum() != n_queries:
            raise ValueError(f"query_counts add up to {counts.sum()} but docs has {n_queries} rows")
        self.n_sessions = len(counts)
        self.counts = counts
        self.starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        self.session_of = np.repeat(np.arange(self.n_sessions), counts)
        self.qpos = np.arange(n_queries) - self.starts[self.session_of]
        self.max_queries = int(counts.max())
        if params.pad_to is not None and params.pad_to < self.max_queries:
            raise ValueError(
                f"pad_to {params.pad_to} is shorter than the longest session ({self.max_queries} queries)"
            )

        if params.scan == "observed":
            if batch.scanned_to is None or (batch.scanned_to < 0).any():
                raise ValueError("scan='observed' needs a scanned_to depth for every query")
            cut = np.asarray(batch.scanned_to, dtype=np.int64)
        else:
            cut = np.full(n_queries, params.top, dtype=np.int64)
        self.width = max(int(cut.max()), 1)
        if self.width > stored_depth:
            raise ValueError(f"the batch keeps {stored_depth} ranks per query but scoring needs {self.width}")
        docs = batch.docs[:, : self.width]
        if params.short_lists == "as_is":
            cut = np.minimum(cut, (docs >= 0).sum(axis=1))
        self.cut = cut
        # Under the defaults every segment is D long and no cell needs masking.
        self.inside = None if (cut == self.width).all() else np.arange(self.width)[None, :] < cut[:, None]

        shown = batch.judged[:, : self.width]
        if self.inside is not None:
            shown = shown & self.inside
        # The gains, with one row of zeros after the last query for `_full_segment_curves` to gather.
        self.gains_and_zero_row = np.empty((n_queries + 1, self.width))
        self.gains_and_zero_row[-1] = 0.0
        self.gains = _gains(batch.grades[:, : self.width], shown, params, out=self.gains_and_zero_row[:-1])
        if params.duplicates == "first":
            _keep_first_showings(self.gains, docs, self.inside, self.session_of)
        self.topic = batch.topic
        self.ideal_by_topic = _ideal_vectors(batch, params, self.width)

        # Where each segment starts in its session's curve, and each session's own curve length.
        begins = np.cumsum(cut) - cut
        self.offset = begins - begins[self.starts][self.session_of]
        self.lengths = np.add.reduceat(cut, self.starts)

    def summaries(self, rank_disc: np.ndarray, query_disc: np.ndarray) -> dict[str, np.ndarray]:
        """Summaries for nb rank discounts (D, nb) by nbq query discounts (n, nbq): each array has shape
        (nb, nbq, S), sessions last so that every elementwise loop runs along the long axis."""
        n_b, n_bq, n_sessions = rank_disc.shape[1], query_disc.shape[1], self.n_sessions

        cells = (self.qpos * (n_b * n_sessions) + self.session_of)[:, None] + np.arange(n_b) * n_sessions

        def by_position(per_query_values: np.ndarray) -> np.ndarray:
            """(Q, nb) per-query values as an (n, nb, S) table, 0 past each session's last query."""
            table = np.zeros((self.max_queries, n_b, n_sessions))
            table.reshape(-1)[cells] = per_query_values
            return table

        def discounted_sum(table: np.ndarray) -> np.ndarray:
            """sum over query positions of table * query discount: (n, nb, S) -> (nb, nbq, S)."""
            summed = query_disc.T @ table.reshape(self.max_queries, -1)
            return summed.reshape(n_bq, n_b, n_sessions).transpose(1, 0, 2)

        # A query's DCG at its cut, and sum_i G[i] d(i) i, in one product.
        ranks = np.arange(self.width, dtype=np.float64)[:, None]
        products = (
            np.concatenate([rank_disc, ranks * rank_disc], axis=1).T @ self.gains.T
        ).T  # faster than Q x k
        dcg = products[:, :n_b]
        # avg-pos over the curve up to the session's end L: element e at curve position p_e (0-based) is in
        # L - p_e of the L cumulated values, so the sum of the curve is sum_e value_e * (L - p_e).
        to_end = (self.lengths[self.session_of] - self.offset)[:, None]
        curve_sum = discounted_sum(by_position(to_end * dcg - products[:, n_b:]))
        prefix = np.zeros((len(self.ideal_by_topic), self.width + 1, n_b))
        np.cumsum(self.ideal_by_topic[:, :, None] * rank_disc[None, :, :], axis=1, out=prefix[:, 1:])
        ideal_final = discounted_sum(by_position(prefix[self.topic[self.session_of], self.cut]))
        dcg = by_position(dcg)
        final = discounted_sum(dcg)
        lengths = np.broadcast_to(self.lengths, final.shape)

        last = self.counts - 1
        last_query = dcg[last, :, np.arange(n_sessions)].T[:, None, :] * query_disc[last].T[None, :, :]
        # best query: absent positions are -inf so that they never win, even over negative gains.
        np.copyto(dcg, -np.inf, where=np.arange(self.max_queries)[:, None, None] >= self.counts)
        best_query = dcg[0][:, None, :] * query_disc[0][None, :, None]
        candidate = np.empty_like(best_query)
        for position in range(1, self.max_queries):
            np.multiply(dcg[position][:, None, :], query_disc[position][None, :, None], out=candidate)
            np.maximum(best_query, candidate, out=best_query)
        return {
            "final": final,
            "ideal_final": ideal_final,
            "normalized_final": _safe_divide(final, ideal_final),
            "last_query": last_query,
            "best_query": best_query,
            "average": _safe_divide(curve_sum, lengths),
        }

    def curves(
        self, rank_disc: np.ndarray, query_disc: np.ndarray, width: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The (S, width) curve, ideal and normalized matrices."""
        if self.inside is None and len(self.ideal_by_topic) * self.max_queries <= self.n_sessions:
            return self._full_segment_curves(rank_disc, query_disc, width)
        curve = self.curve(rank_disc, query_disc, width)
        ideal = self.ideal_curve(rank_disc, query_disc, width)
        return curve, ideal, _normalize(curve, ideal, out=np.empty_like(curve))

    def _full_segment_curves(
        self, rank_disc: np.ndarray, query_disc: np.ndarray, width: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`curves` when every segment is D long (the defaults) and the ideal table is small.

        Then column c of every session's row is rank c % D of its query c // D, so the two discounts of a cell
        depend on its column alone. The matrices are built a block of sessions at a time: the block's rows are
        gathered from the gains (a row of zeros past a session's last query), discounted by two column vectors,
        cumulated in place, and the block's ideal and normalized rows are written while it is still in cache.
        Each cell goes through the same operations in the same order as in `curve`, `ideal_curve` and
        `_normalize`, so the results are the same to the bit; what is saved is passes over memory (each matrix
        is written once, no (Q, D) or (S, W) temporary is made) and page faults on temporaries.
        """
        depth, n_sessions, n_max, n_queries = self.width, self.n_sessions, self.max_queries, len(self.gains)
        used = n_max * depth  # columns past it (pad_to) stay 0 until the cumsum carries the final value on
        rank_by_column = np.tile(rank_disc, n_max)
        query_by_column = np.repeat(query_disc, depth)
        table = self._ideal_table(rank_disc, query_disc, width)
        ideal_row = self.topic * n_max + self.counts - 1
        query_bounds = np.append(self.starts, n_queries)

        curve = np.zeros((n_sessions, width))
        ideal = np.empty_like(curve)
        normalized = np.empty_like(curve)
        step = max(1, _BLOCK_CELLS // width)

        def blocks(begin: int, end: int) -> None:
            # The block's row of the gains for each (session, query position): the spare zero row past the end
            # where the session has no such query.
            source_row = np.empty(step * n_max, dtype=np.intp)
            with np.errstate(divide="ignore", invalid="ignore"):
                for first in range(begin, end, step):
                    last = min(first + step, end)
                    queries = slice(query_bounds[first], query_bounds[last])
                    sources = source_row[: (last - first) * n_max]
                    sources.fill(n_queries)
                    sources[(self.session_of[queries] - first) * n_max + self.qpos[queries]] = np.arange(
                        queries.start, queries.stop
                    )
                    block = curve[first:last]
                    cells = block[:, :used]
                    np.take(
                        self.gains_and_zero_row,
                        sources.reshape(last - first, n_max),
                        axis=0,
                        out=cells.reshape(last - first, n_max, depth),
                        mode="clip",
                    )
                    cells *= rank_by_column
                    cells *= query_by_column
                    np.cumsum(block, axis=1, out=block)
                    ideal_block = np.take(
                        table, ideal_row[first:last], axis=0, out=ideal[first:last], mode="clip"
                    )
                    np.divide(block, ideal_block, out=normalized[first:last])

        # numpy releases the GIL inside these operations, so the blocks of the two halves of the sessions are
        # built on two cores at once (rows are independent; each half writes only its own rows).
        halves = _parallel_ranges(n_sessions, step)
        if len(halves) == 1:
            blocks(*halves[0])
        else:
            with ThreadPoolExecutor(len(halves)) as pool:
                for done in [pool.submit(blocks, begin, end) for begin, end in halves]:
                    done.result()
        _zero_where_no_ideal(curve, ideal, normalized)
        return curve, ideal, normalized

    def curve(self, rank_disc: np.ndarray, query_disc: np.ndarray, width: int) -> np.ndarray:
        elements = self.gains * rank_disc
        elements *= query_disc[self.qpos][:, None]
        return self._cumulate(elements, width)

    def ideal_curve(self, rank_disc: np.ndarray, query_disc: np.ndarray, width: int) -> np.ndarray:
        n_topics, n_max = len(self.ideal_by_topic), self.max_queries
        if self.inside is not None or n_topics * n_max > self.n_sessions:
            elements = self.ideal_by_topic[self.topic[self.session_of]] * rank_disc
            elements *= query_disc[self.qpos][:, None]
            if self.inside is not None:
                elements *= self.inside
            return self._cumulate(elements, width)
        # Every segment full: a session's ideal curve depends only on its scenario and its number of
        # queries, so build those few curves and copy one to each session.
        return self._ideal_table(rank_disc, query_disc, width)[self.topic * n_max + self.counts - 1]

    def _ideal_table(self, rank_disc: np.ndarray, query_disc: np.ndarray, width: int) -> np.ndarray:
        """Every segment full: the ideal curve of a session of scenario t and n queries is row t * n_max + n - 1."""
        n_topics, n_max, depth = len(self.ideal_by_topic), self.max_queries, self.width
        running = (self.ideal_by_topic[:, None, :] * rank_disc * query_disc[:, None]).reshape(n_topics, -1)
        np.cumsum(running, axis=1, out=running)
        table = np.empty((n_topics, n_max, width))
        for n in range(1, n_max + 1):
            table[:, n - 1, : n * depth] = running[:, : n * depth]
            table[:, n - 1, n * depth :] = running[:, n * depth - 1 : n * depth]
        return table.reshape(n_topics * n_max, width)

    def _cumulate(self, elements: np.ndarray, width: int) -> np.ndarray:
        """Lay each query's discounted elements at its place in its session's row, then cumulate: the running
        sum stays constant after the session's last element."""
        rows = np.zeros((self.n_sessions, width))
        if self.inside is None and width % self.width == 0:
            rows.reshape(-1, self.width)[self.session_of * (width // self.width) + self.qpos] = elements
        else:
            flat = rows.reshape(-1)
            cells = (self.session_of * width + self.offset)[:, None] + np.arange(self.width)[None, :]
            if self.inside is None:
                flat[cells.ravel()] = elements.ravel()
            else:
                flat[cells[self.inside]] = elements[self.inside]
        return np.cumsum(rows, axis=1, out=rows)


def _gains(
    grades: np.ndarray, shown: np.ndarray, params: SessionParams, *, out: np.ndarray | None = None
) -> np.ndarray:
    """The gain of each cell where `shown` (judged, inside the cut), 0 elsewhere, written to `out` if given.
    Under the weighted formulations a negative grade is unjudged, as in `python -m scoring eval`
    (metrics.grade_gains, which raises GradeError for a grade past the weights); kanoulas2011 gives it 2^g - 1,
    so -1 costs 0.5."""
    gains = np.empty(grades.shape) if out is None else out
    if params.formulation == "kanoulas2011":
        np.exp2(grades, out=gains, dtype=np.float64)
        gains -= 1.0
    elif grades.size and 0 <= grades.min() and grades.max() < len(params.weights):
        # No negative grade and none past the weights: grade_gains' value in one lookup, where grade_gains
        # spends four passes and three (Q, D) temporaries on the masks for negative grades.
        np.asarray(params.weights, dtype=np.float64).take(grades, out=gains, mode="clip")
    else:
        gains[...] = grade_gains(
            grades, params.weights
        )  # cells past the cut hold recall-base grades: checked
    gains *= shown
    return gains


def _keep_first_showings(
    gains: np.ndarray, docs: np.ndarray, inside: np.ndarray | None, session_of: np.ndarray
) -> None:
    """duplicates='first': zero the gain of every showing of a document after its first in the session.
    Cells are visited row-major, which is the order of the concatenation."""
    showing = docs >= 0 if inside is None else inside & (docs >= 0)
    rows, cols = np.nonzero(showing)
    key = session_of[rows] * (int(docs.max()) + 1) + docs[rows, cols]
    _, first = np.unique(key, return_index=True)
    repeat = np.ones(len(key), dtype=bool)
    repeat[first] = False
    gains[rows[repeat], cols[repeat]] = 0.0


def _ideal_vectors(batch: SessionBatch, params: SessionParams, width: int) -> np.ndarray:
    """(topics, width): each scenario's ideal vector (metrics.ideal_gains: its positive judged gains sorted
    descending, then zeros). Negative kanoulas2011 gains stay out: an ideal ranking shows an unjudged document."""
    n_topics = int(max(batch.topic.max(), batch.recall_topic.max(initial=-1))) + 1
    order = np.argsort(batch.recall_topic, kind="stable")
    topic = batch.recall_topic[order]
    rank = np.arange(len(topic)) - np.searchsorted(topic, topic, side="left")
    judged = np.zeros((n_topics, int(rank.max(initial=-1)) + 1))
    judged[topic, rank] = _gains(batch.recall_grade[order], np.ones(len(topic), dtype=bool), params)
    return ideal_gains(judged, depth=width)


def _normalize(curve: np.ndarray, ideal: np.ndarray, out: np.ndarray) -> np.ndarray:
    """curve / ideal into out, 0 where the ideal is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(curve, ideal, out=out)
    _zero_where_no_ideal(curve, ideal, out)
    return out


def _zero_where_no_ideal(curve: np.ndarray, ideal: np.ndarray, normalized: np.ndarray) -> None:
    """Redo curve / ideal with 0 where the ideal is 0, in the rows that need it. The ideal is non-decreasing
    along a row, so a row whose ideal starts above 0 needs no test per element; only rows that start at 0 (an
    empty recall base, or leading empty lists under as_is) take the slow path."""
    if ideal.shape[1]:
        starts_at_zero = np.flatnonzero(ideal[:, 0] == 0)
        normalized[starts_at_zero] = _safe_divide(curve[starts_at_zero], ideal[starts_at_zero])


def _safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, and 0 where the denominator is 0 (an empty recall base), never NaN."""
    return np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator != 0)


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose one of {', '.join(choices)}")


def _check_b(b: float) -> None:
    if not (b > 1.0):
        raise ValueError(f"the rank log base b must be greater than 1, got {b}")


def _check_bq(bq: float) -> None:
    if not (1.0 < bq < 1000.0):
        raise ValueError(f"the query log base bq must satisfy 1 < bq < 1000 (ECIR 2008 eq. 1), got {bq}")
