"""Scoring a batch: `score_sessions` for one set of parameters, `session_grid` for every (b, bq) pair.

Rank discount (metrics.rank_discount): 1 / (1 + log_b i) under "2008", 1 for i < b then 1 / log_b i under
"2002", 1 / log2(i + 1) under "log2"; "kanoulas2011" uses 1 / log_b(i + b - 1). Query discount:
1 / (1 + log_bq q) (ECIR 2008 eq. 1), or 1 / log_bq(q + bq - 1) under "kanoulas2011".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..metrics import rank_discount
from .batch import SessionBatch
from .params import SUMMARIES, SessionParams, check_b, check_bq
from .prepared import Prepared


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


def score_sessions(
    batch: SessionBatch, params: SessionParams | None = None, *, curves: bool = True
) -> SessionScores:
    """Score every session of the batch (default params: the paper's); curves=False skips the (S, W)
    curve matrices."""
    params = params or SessionParams()
    prep = Prepared(batch, params)
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
        check_b(b)
    for bq in bq_arr:
        check_bq(bq)
    prep = Prepared(batch, params)
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
