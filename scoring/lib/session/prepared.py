"""What scoring a batch needs whatever the log bases: gains, segments, ideal vectors (`Prepared`), and from
them the per-session summaries and the cumulated curves for given rank and query discounts.

Element i of query q's segment is G_q[i] * rank_discount(i) * query_discount(q); a session's curve is the
running sum over its segments, its ideal curve the same over each segment's ideal vector, and the normalized
curve their ratio (0 where the ideal is 0).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..metrics import grade_gains, ideal_gains
from .batch import SessionBatch
from .params import SessionParams

# Sessions are turned into curves a block at a time, about this many cells per (S, W) matrix (1 MiB of
# float64), so that a block's curve, ideal and normalized rows are still in the CPU cache from one step to
# the next.
_BLOCK_CELLS = 1 << 17
# Batches smaller than this many sessions are built on one thread (a thread costs more than it saves).
_PARALLEL_SESSIONS = 20_000


def _parallel_ranges(n_sessions: int, step: int) -> list[tuple[int, int]]:
    """The session ranges built on separate threads: one per CPU (at most two) for a large batch."""
    workers = min(2, os.cpu_count() or 1) if n_sessions >= _PARALLEL_SESSIONS else 1
    middle = -(-n_sessions // workers // step) * step  # a block boundary
    return [(0, n_sessions)] if workers == 1 else [(0, middle), (middle, n_sessions)]


class Prepared:
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

        if params.scan in ("observed", "exposure"):  # the depths come with the batch either way
            if batch.scanned_to is None or (batch.scanned_to < 0).any():
                raise ValueError(f"scan={params.scan!r} needs a scanned_to depth for every query")
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
        depend on its column alone. The matrices are built a block of sessions at a time: the block's rows
        are gathered from the gains (a row of zeros past a session's last query), discounted by two column
        vectors, cumulated in place, and the block's ideal and normalized rows are written while it is still
        in cache. Each cell goes through the same operations in the same order as in `curve`, `ideal_curve`
        and `_normalize`, so the results are the same to the bit; what is saved is passes over memory (each
        matrix is written once, no (Q, D) or (S, W) temporary is made) and page faults on temporaries.
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
        """Every segment full: the ideal curve of a session of scenario t and n queries is row
        t * n_max + n - 1."""
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
    (metrics.grade_gains, which raises GradeError for a grade past the weights); kanoulas2011 gives it
    2^g - 1, so -1 costs 0.5."""
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
    descending, then zeros). Negative kanoulas2011 gains stay out: an ideal ranking shows an unjudged
    document."""
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
