"""Session measures beside sDCG: the forms researchers compare sessions by. Pure numpy, no Django.

Every measure scores each session of a `SessionBatch` (scoring/lib/session.py, `encode_sessions`) and returns
one float per session; `score_measures(batch, names, params, trails=...)` returns {name: (S,) array}. The
definitions, the readings this module takes where a paper leaves a choice, and a worked example of each are in
docs/scoring-sessions.md ("Other session measures").

- Kanoulas forms (Kanoulas, Carterette, Clough & Sanderson, SIGIR 2011; Jiang & Allan, CHIIR 2016): gain
  2^g - 1, rank discount 1 / log_b(r + b - 1), query discount 1 / log_bq(q + bq - 1), each query cut at k:
  `sdcg_per_query` (sDCG / number of queries), `nsdcg` (sDCG over the scenario's ideal top-k list repeated
  once per query), and each query's nDCG@k aggregated over the session: `ndcg_mean`, `ndcg_max`, `ndcg_first`,
  `ndcg_last`.
- `esndcg`: expected session nDCG over the browsing model's paths (p_reformulate, p_down), exactly, by a
  forward-backward sum over path lengths; `esndcg_mc`: the same by sampling paths.
- `srbp`: session rank-biased precision (Lipani, Carterette & Yilmaz, ICTIR 2019), persistence p, balance b.
- `tbg` (Smucker & Clarke, SIGIR 2012) and `u_measure` (Sakai & Dou, SIGIR 2013) over the session's trail:
  the examined results in order, timed by the observed query times and dwell times (`TrailQuery`), with the
  papers' default reading times where a time is missing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .session import SessionBatch

KANOULAS_MEASURES = ("sdcg_per_query", "nsdcg", "ndcg_mean", "ndcg_max", "ndcg_first", "ndcg_last")
TIME_MEASURES = ("tbg", "u_measure")
MEASURES = (*KANOULAS_MEASURES, "esndcg", "esndcg_mc", "srbp", *TIME_MEASURES)
# Plain-word labels, for forms and tables.
MEASURE_LABELS = {
    "sdcg_per_query": "Session DCG per query (sDCG divided by the number of queries)",
    "nsdcg": "Normalized session DCG (Kanoulas et al. 2011)",
    "ndcg_mean": "Mean of the queries' nDCG@k",
    "ndcg_max": "Best query's nDCG@k",
    "ndcg_first": "First query's nDCG@k",
    "ndcg_last": "Last query's nDCG@k",
    "esndcg": "Expected session nDCG over browsing paths (exact)",
    "esndcg_mc": "Expected session nDCG over browsing paths (sampled)",
    "srbp": "Session rank-biased precision (Lipani et al. 2019)",
    "tbg": "Time-biased gain over the session's timeline (Smucker & Clarke 2012)",
    "u_measure": "U-measure over the session's timeline (Sakai & Dou 2013)",
}


SRBP_NEEDS_GRADE_MAX = (
    "srbp needs grade_max, the top grade of the relevance scale (MeasureParams(grade_max=3) on 0..3): it is "
    "not taken from the judgments of the sessions scored together, which would make a session's sRBP depend "
    "on its batch"
)


@dataclass(frozen=True)
class MeasureParams:
    """The measures' parameters; each default is named in docs/scoring-sessions.md with where it comes
    from."""

    k: int = 10  # ranks of each query that count (the scanning length X)
    b: float = 2.0  # rank log base of the Kanoulas forms
    bq: float = 4.0  # query log base of the Kanoulas forms
    # esNDCG's browsing model: reformulate after a query's list, and step down a list.
    p_reformulate: float = 0.9
    p_down: float = 0.7
    mc_paths: int = 10_000
    seed: int = 0
    # sRBP: persistence p (go on at all) and balance b (given going on, down the same list rather than to the
    # next query); relevance is grade / grade_max, the top grade of the relevance scale. sRBP needs it given:
    # taken from the judgments of the sessions scored together, a session's value would depend on which other
    # sessions share its batch (0.24 alone, 0.16 beside another topic's session).
    srbp_p: float = 0.8
    srbp_b: float = 0.5
    grade_max: int | None = None
    # Time-biased gain, Smucker & Clarke's calibrated constants (seconds).
    half_life: float = 224.0
    summary_seconds: float = 4.4
    read_intercept: float = 7.8
    read_per_word: float = 0.018
    document_words: int = 500  # the project's default length where the words of a document are not known
    p_click_relevant: float = 0.64
    p_click_nonrelevant: float = 0.39
    p_save_relevant: float = 0.77
    # U-measure: the patience L (seconds) where the linear decay reaches 0.
    u_patience: float = 600.0

    def __post_init__(self) -> None:
        self._check_bases_and_counts()
        self._check_probabilities_and_times()

    def _check_bases_and_counts(self) -> None:
        if int(self.k) != self.k or self.k < 1:
            raise ValueError(f"k (the ranks per query) must be a whole number >= 1, got {self.k}")
        if not self.b > 1:
            raise ValueError(f"the rank log base b must be greater than 1, got {self.b}")
        if not self.bq > 1:
            raise ValueError(f"the query log base bq must be greater than 1, got {self.bq}")
        if int(self.mc_paths) != self.mc_paths or self.mc_paths < 1:
            raise ValueError(f"mc_paths must be a whole number >= 1, got {self.mc_paths}")
        if self.grade_max is not None and (int(self.grade_max) != self.grade_max or self.grade_max < 1):
            raise ValueError(f"grade_max must be a whole number >= 1, got {self.grade_max}")

    def _check_probabilities_and_times(self) -> None:
        for name in (
            "p_reformulate",
            "p_down",
            "srbp_b",
            "p_click_relevant",
            "p_click_nonrelevant",
            "p_save_relevant",
        ):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} is a probability: 0 <= {name} <= 1, got {getattr(self, name)}")
        if not 0.0 <= self.srbp_p < 1.0:
            raise ValueError(f"srbp_p (sRBP's persistence) must satisfy 0 <= p < 1, got {self.srbp_p}")
        for name in ("half_life", "u_patience"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be a number of seconds > 0, got {getattr(self, name)}")
        for name in ("summary_seconds", "read_intercept", "read_per_word", "document_words"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")

    @property
    def document_seconds(self) -> float:
        """Smucker & Clarke's reading time of a document of `document_words` words: 0.018 l + 7.8 s."""
        return self.read_per_word * self.document_words + self.read_intercept


@dataclass(frozen=True)
class TrailQuery:
    """What was observed of one query of a session, for the time measures (all optional).

    - start: seconds from the session's start when the query was issued; None: right after the previous
      query's examined results (the first query at 0).
    - depth: the deepest rank examined (a scan mark, the deepest document opened); None: the top k.
    - opened: rank -> dwell seconds of each document opened from this list (None as a dwell: opened, time not
      recorded); `opened=None` means clicks were not recorded, and the papers' click model stands in for them.
    - reached: rank -> seconds after the query's start when the result was first on the participant's screen
      (measured exposure); where given, it is when the result was reached, in place of the modelled
      clock (which goes on from there); ranks not in it keep the model.
    """

    start: float | None = None
    depth: int | None = None
    opened: Mapping[int, float | None] | None = field(default=None)
    reached: Mapping[int, float] | None = field(default=None)


def check_measures(names: Sequence[str]) -> tuple[str, ...]:
    unknown = [name for name in names if name not in MEASURES]
    if unknown:
        raise ValueError(f"unknown measure {unknown[0]!r}; choose from {', '.join(MEASURES)}")
    return tuple(dict.fromkeys(names))


def score_measures(
    batch: SessionBatch,
    names: Sequence[str],
    params: MeasureParams | None = None,
    *,
    trails: Sequence[Sequence[TrailQuery] | None] | None = None,
    keys: Sequence[int] | None = None,
) -> dict[str, np.ndarray]:
    """{name: one value per session} for each measure named. `trails[s]` (one TrailQuery per query, or None)
    feeds the time measures; without it they use the papers' model times alone. esndcg_mc samples session s
    with the generator seeded by (params.seed, keys[s]) (default: its index), so a session's sampled value
    does not depend on which other sessions share its batch when keys are stable ids."""
    params = params or MeasureParams()
    names = check_measures(names)
    if trails is not None and len(trails) != batch.n_sessions:
        raise ValueError(f"{len(trails)} trails for {batch.n_sessions} sessions")
    if "srbp" in names and params.grade_max is None:
        raise ValueError(SRBP_NEEDS_GRADE_MAX)
    view = _View(batch, params)
    out: dict[str, np.ndarray] = {}
    if any(name in KANOULAS_MEASURES for name in names):
        kanoulas = view.kanoulas()
        out.update({name: kanoulas[name] for name in names if name in kanoulas})
    if "esndcg" in names:
        out["esndcg"] = np.array([view.esndcg_exact(s) for s in range(batch.n_sessions)])
    if "esndcg_mc" in names:
        keys = range(batch.n_sessions) if keys is None else keys
        if len(keys) != batch.n_sessions:
            raise ValueError(f"{len(keys)} keys for {batch.n_sessions} sessions")
        out["esndcg_mc"] = np.array(
            [
                view.esndcg_sampled(s, np.random.default_rng([params.seed, int(key)]))[0]
                for s, key in enumerate(keys)
            ]
        )
    if "srbp" in names:
        out["srbp"] = view.srbp()  # checked first: grade_max given
    for name in TIME_MEASURES:
        if name in names:
            out[name] = np.array(
                [view.timed(s, None if trails is None else trails[s])[name] for s in range(batch.n_sessions)]
            )
    return {name: out[name] for name in names}


def esndcg_monte_carlo(
    batch: SessionBatch,
    session: int,
    params: MeasureParams | None = None,
    *,
    rng: np.random.Generator | None = None,
) -> tuple[float, float]:
    """(mean, standard error) of one session's path nDCG over params.mc_paths sampled paths: the exact value
    lies within mean +- 1.96 standard errors in 95% of seeds."""
    params = params or MeasureParams()
    return _View(batch, params).esndcg_sampled(session, rng or np.random.default_rng(params.seed))


class _View:
    """The batch cut to the top k of each query, with the gains every measure shares."""

    def __init__(self, batch: SessionBatch, params: MeasureParams):
        counts = np.asarray(batch.query_counts, dtype=np.int64)
        if batch.docs.shape[1] < params.k:
            raise ValueError(f"the batch keeps {batch.docs.shape[1]} ranks per query but k is {params.k}")
        self.batch, self.params, self.counts = batch, params, counts
        self.starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        self.session_of = np.repeat(np.arange(len(counts)), counts)
        self.qpos = np.arange(len(self.session_of)) - self.starts[self.session_of]
        k = params.k
        self.docs = batch.docs[:, :k]
        self.grades = np.where(batch.judged[:, :k], batch.grades[:, :k], 0)
        self.lengths = (self.docs >= 0).sum(axis=1)  # a list is contiguous from rank 1
        # Kanoulas gain 2^g - 1 (a grade of -1 costs 0.5); unjudged and empty cells 0.
        self.gains = np.where(batch.judged[:, :k], np.exp2(batch.grades[:, :k].astype(np.float64)) - 1.0, 0.0)
        self.topic = batch.topic
        n_topics = int(max(batch.topic.max(), batch.recall_topic.max(initial=-1))) + 1
        # Each scenario's recall base as positive Kanoulas gains, sorted descending (an ideal ranking would
        # show an unjudged document before a negatively graded one).
        width = max(int(counts.max()) * k, k)
        self.ideal = np.zeros((n_topics, width))
        for t in range(n_topics):
            grades = batch.recall_grade[batch.recall_topic == t]
            gains = np.sort(np.exp2(grades[grades > 0].astype(np.float64)) - 1.0)[::-1][:width]
            self.ideal[t, : len(gains)] = gains

    # --- Kanoulas forms -------------------------------------------------------------------------------------

    def kanoulas(self) -> dict[str, np.ndarray]:
        p, counts = self.params, self.counts
        rank_disc = np.log(p.b) / np.log(np.arange(1, p.k + 1) + p.b - 1.0)
        query_disc = np.log(p.bq) / np.log(np.arange(1, int(counts.max()) + 1) + p.bq - 1.0)
        dcg = self.gains @ rank_disc  # (Q,)
        sdcg = np.bincount(self.session_of, weights=dcg * query_disc[self.qpos], minlength=len(counts))
        idcg = self.ideal[:, : p.k] @ rank_disc  # (topics,)
        ideal_sdcg = idcg[self.topic] * np.cumsum(query_disc)[counts - 1]
        # Each query's nDCG@k is the usual one (1 / log2(r + 1), trec_eval's with gain 2^g - 1), whatever b.
        log2_disc = 1.0 / np.log2(np.arange(1, p.k + 1) + 1.0)
        ndcg = _safe_divide(
            self.gains @ log2_disc, (self.ideal[:, : p.k] @ log2_disc)[self.topic[self.session_of]]
        )
        return {
            "sdcg_per_query": sdcg / counts,
            "nsdcg": _safe_divide(sdcg, ideal_sdcg),
            "ndcg_mean": np.bincount(self.session_of, weights=ndcg, minlength=len(counts)) / counts,
            "ndcg_max": np.maximum.reduceat(ndcg, self.starts),
            "ndcg_first": ndcg[self.starts],
            "ndcg_last": ndcg[self.starts + counts - 1],
        }

    # --- esNDCG ---------------------------------------------------------------------------------------------

    def _session_lists(self, s: int) -> tuple[np.ndarray, np.ndarray]:
        rows = slice(self.starts[s], self.starts[s] + self.counts[s])
        return self.gains[rows], self.lengths[rows]

    def _length_law(self, length: int) -> np.ndarray:
        """P(L = l), l = 0..k: how far down a list of `length` results the user goes. Each result after the
        first is examined with p_down; the list's end stops the user (an empty list: L = 0)."""
        law = np.zeros(self.params.k + 1)
        if length == 0:
            law[0] = 1.0
            return law
        down = self.params.p_down
        steps = np.arange(1, length + 1)
        law[1 : length + 1] = down ** (steps - 1) * (1.0 - down)
        law[length] = down ** (length - 1)
        return law

    def _path_tables(self, s: int):
        gains, lengths = self._session_lists(s)
        n, k = len(lengths), self.params.k
        longest = int(lengths.sum())
        positions = np.arange(1, longest + k + 2, dtype=np.float64)
        discount = 1.0 / np.log2(positions + 1.0)  # discount[pos - 1]: rank discount of path position pos
        ideal = np.zeros(longest + 1)
        row = self.ideal[self.topic[s]]
        width = min(longest, len(row))
        ideal[1 : width + 1] = np.cumsum(row[:width] * discount[:width])
        ideal[width + 1 :] = ideal[width]
        inverse_ideal = _safe_divide(np.ones(longest + 1), ideal)  # 1 / IDCG(T), 0 where IDCG(T) = 0
        laws = [self._length_law(int(length)) for length in lengths]
        return gains, lengths, n, longest, discount, inverse_ideal, laws

    def esndcg_exact(self, s: int) -> float:
        """E[DCG(path) / IDCG(len(path))] over every path of the browsing model, without enumerating them.

        With F_i(a) = P(the user reaches query i having examined a results), P_i(l) = P(L_i = l) and B_i(u) =
        P(u more results are examined after query i), the expectation is
        sum_i sum_a sum_l F_i(a) P_i(l) C_i(a, l) W_i(a + l), where C_i(a, l) = sum_{j<=l} g_ij d(a + j) is
        the discounted gain of query i's first l results at path positions a+1..a+l, and
        W_i(m) = sum_u B_i(u) / IDCG(m + u) depends on m alone. Linear in queries x path length x k.
        """
        gains, lengths, n, longest, discount, inverse_ideal, laws = self._path_tables(s)
        p_ref, k = self.params.p_reformulate, self.params.k
        size = longest + 1
        # B_i backwards: after the last query nothing more; before it, stop (1 - p) or go on to query i + 1.
        after = [np.zeros(size) for _ in range(n)]
        after[n - 1][0] = 1.0
        for i in range(n - 2, -1, -1):
            onward = np.convolve(laws[i + 1], after[i + 1])[:size]
            after[i] = p_ref * onward
            after[i][0] += 1.0 - p_ref
        padded = np.concatenate([inverse_ideal, np.zeros(size)])
        shifts = np.arange(size)[:, None] + np.arange(size)[None, :]  # m + u
        reached = np.zeros(size)
        reached[0] = 1.0
        total = 0.0
        cumulated = self._prefix_tables(gains, discount, size)
        ends = np.minimum(np.arange(size)[:, None] + np.arange(k + 1)[None, :], longest)
        for i in range(n):
            weight = padded[shifts] @ after[i]  # W_i(m), m = 0..longest
            total += float(np.sum(reached[:, None] * laws[i][None, :] * cumulated[i] * weight[ends]))
            reached = p_ref * np.convolve(reached, laws[i])[:size]
        return total

    def _prefix_tables(self, gains: np.ndarray, discount: np.ndarray, size: int) -> np.ndarray:
        """C[i, a, l] = sum over j <= l of g_ij d(a + j): query i's first l results read at path positions
        a + 1 .. a + l, for a = 0..size-1 and l = 0..k."""
        k = self.params.k
        at = discount[np.arange(size)[:, None] + np.arange(k)[None, :]]  # d(a + j), j = 1..k
        table = np.zeros((len(gains), size, k + 1))
        np.cumsum(at[None, :, :] * gains[:, None, :], axis=2, out=table[:, :, 1:])
        return table

    def esndcg_sampled(self, s: int, rng: np.random.Generator) -> tuple[float, float]:
        """(mean, standard error) of DCG(path) / IDCG(len(path)) over params.mc_paths paths drawn from the
        model."""
        gains, lengths, n, longest, discount, inverse_ideal, _ = self._path_tables(s)
        p = self.params
        paths = p.mc_paths
        # Queries reached: 1 + the number of reformulations before the first "stop", at most n.
        if p.p_reformulate >= 1.0:
            queries = np.full(paths, n)
        else:
            queries = np.minimum(rng.geometric(1.0 - p.p_reformulate, size=paths), n)
        if p.p_down >= 1.0:
            depth = np.broadcast_to(lengths, (paths, n)).copy()
        else:
            depth = np.minimum(rng.geometric(1.0 - p.p_down, size=(paths, n)), lengths[None, :])
        depth = np.where(np.arange(n)[None, :] < queries[:, None], depth, 0)
        offset = np.cumsum(depth, axis=1) - depth  # path position before each query's first result
        # A path's DCG is the sum over its queries of the discounted gain of query i's first depth_i results
        # at path positions offset_i + 1.., read from a prefix-sum table rather than result by result.
        table = self._prefix_tables(gains, discount, longest + 1)
        dcg = table[np.arange(n)[None, :], offset, depth].sum(axis=1)
        values = dcg * inverse_ideal[depth.sum(axis=1)]
        spread = float(values.std(ddof=1)) if paths > 1 else 0.0
        return float(values.mean()), spread / np.sqrt(paths)

    # --- sRBP -----------------------------------------------------------------------------------------------

    def srbp(self) -> np.ndarray:
        """(1 - p) sum_m ((p - bp) / (1 - bp))^(m-1) sum_k (bp)^(k-1) r_mk, with r = grade / grade_max."""
        p, b = self.params.srbp_p, self.params.srbp_b
        if self.params.grade_max is None:
            raise ValueError(SRBP_NEEDS_GRADE_MAX)
        relevance = np.clip(self.grades, 0, None) / self.params.grade_max
        down = (p * b) ** np.arange(self.params.k)
        onward = (p - b * p) / (1.0 - b * p)
        per_query = (relevance @ down) * onward**self.qpos
        return (1.0 - p) * np.bincount(self.session_of, weights=per_query, minlength=len(self.counts))

    # --- time measures --------------------------------------------------------------------------------------

    def timed(self, s: int, trail: Sequence[TrailQuery] | None) -> dict[str, float]:
        """TBG and U over the session's trail: its queries in order, each list down to the examined depth.

        The clock starts at 0 (the session's start); a query's observed start resets it. Each result examined
        costs the summary time, plus the document's reading time if it was opened (the observed dwell, else
        0.018 l + 7.8 s); where clicks were not recorded, TBG adds the expected reading time P(click | R) x
        that time and U takes the user to read every relevant document reached. TBG credits each relevant
        document the first time it is reached, with Smucker & Clarke's expected gain
        P(click | R=1) P(save | R=1) decayed by exp(-t ln 2 / half_life) at the time t it is reached; U
        credits its grade at the time its reading ends, decayed by max(0, 1 - t / L), for the relevant
        documents the user read (Sakai & Dou's trailtext, measured in seconds).
        """
        p = self.params
        counts = int(self.counts[s])
        if trail is not None and len(trail) != counts:
            raise ValueError(f"session {s}: the trail has {len(trail)} queries, the session {counts}")
        start = int(self.starts[s])
        rows = self.batch.docs[start : start + counts]
        judged = self.batch.judged[start : start + counts]
        grades = np.where(judged, self.batch.grades[start : start + counts], 0)
        held = (rows >= 0).sum(axis=1)
        tbg_gain = p.p_click_relevant * p.p_save_relevant
        decay = np.log(2.0) / p.half_life
        clock_tbg = clock_u = 0.0
        tbg = u = 0.0
        credited_tbg: set[int] = set()
        credited_u: set[int] = set()
        for q in range(counts):
            observed = trail[q] if trail is not None else TrailQuery()
            if observed.start is not None:
                clock_tbg = clock_u = float(observed.start)
            start_tbg, start_u = clock_tbg, clock_u
            depth = p.k if observed.depth is None else int(observed.depth)
            for j in range(min(depth, int(held[q]))):
                doc, grade = int(rows[q, j]), int(grades[q, j])
                relevant = grade > 0
                seen = observed.reached.get(j + 1) if observed.reached is not None else None
                if seen is not None:  # measured: the result was reached then, not when the model says
                    clock_tbg, clock_u = start_tbg + float(seen), start_u + float(seen)
                if relevant and doc not in credited_tbg:
                    tbg += tbg_gain * np.exp(-decay * clock_tbg)
                    credited_tbg.add(doc)
                clock_tbg += p.summary_seconds
                clock_u += p.summary_seconds
                if observed.opened is None:
                    clock_tbg += (
                        p.p_click_relevant if relevant else p.p_click_nonrelevant
                    ) * p.document_seconds
                    read = relevant
                    reading = p.document_seconds
                else:
                    read = (j + 1) in observed.opened
                    dwell = observed.opened.get(j + 1)
                    reading = p.document_seconds if dwell is None else float(dwell)
                    if read:
                        clock_tbg += reading
                if read:
                    clock_u += reading
                    if relevant and doc not in credited_u:
                        u += grade * max(0.0, 1.0 - clock_u / p.u_patience)
                        credited_u.add(doc)
        return {"tbg": float(tbg), "u_measure": float(u)}


def _safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0 (an empty recall base), never NaN."""
    numerator = np.asarray(numerator, dtype=np.float64)
    return np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator != 0)
