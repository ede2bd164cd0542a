"""Single-query measures of Järvelin & Kekäläinen (2002) and their later forms: pure numpy, no Django.

See docs/scoring-eval.md for the definitions and the papers' errata.

Everything is batch-oriented: a result list is a row of a 2-D array (topics x depth, zero padded), so
10,000 topics are one array pass. The pipeline is

    ranked = rank_run(qrels, run)                          # trec_eval's ordering, grades per rank
    gains, ideal = gain_matrices(ranked, weights=...)      # topics x depth, topics x recall-base size
    ndcg = normalized(dcg_at(gains, [10]), dcg_at(ideal, [10]))

and the vector forms (`cumulative_gain`, `discounted_cumulative_gain`, `normalized`, `avg_pos`) take the
same matrices.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

FORMULATIONS = ("log2", "2008", "2002")
GAIN_KINDS = ("linear", "exponential")

# Grade of a rank that holds no judged document (unjudged, or padding past the end of a run). Any negative
# grade has gain 0 (trec_eval: "grades < 0 count as unjudged"), so the sentinel needs no special case.
UNJUDGED = np.iinfo(np.int64).min

# trec_eval keeps a run's scores as C floats (its TEXT_RESULTS.sim), so two scores that differ only past
# float32 precision tie and are ordered by document id. Ranking in float32 reproduces it exactly.
SCORE_DTYPE = np.float32

# The papers' sharp weighting, the default gains of grades 0..3 under the 2002 and 2008 formulations.
PAPER_WEIGHTS = (0.0, 1.0, 10.0, 100.0)


class GradeError(ValueError):
    """A grade the gain mapping cannot map (outside the weights vector). `grade` is the offending value."""

    def __init__(self, grade: int, reason: str):
        self.grade = int(grade)
        self.reason = reason
        super().__init__(reason)


def rank_discount(n: int, formulation: str = "2008", b: float = 2.0) -> np.ndarray:
    """The multiplier applied to the gain at ranks 1..n, so DCG = cumsum(gain * rank_discount(n)).

    - "2008": 1 / (1 + log_b i)           (ECIR 2008 appendix eq. 2, with i the rank of each document)
    - "2002": 1 for i < b, 1 / log_b i    (the original DCG of 2002)
    - "log2": 1 / log2(i + 1)             (trec_eval's ndcg; b is ignored)
    """
    ranks = np.arange(1, n + 1, dtype=np.float64)
    if formulation == "2008":
        _check_base(b)
        return 1.0 / (1.0 + np.log(ranks) / np.log(b))
    if formulation == "2002":
        _check_base(b)
        discount = np.ones(n, dtype=np.float64)
        deep = ranks >= b
        discount[deep] = np.log(b) / np.log(ranks[deep])
        return discount
    if formulation == "log2":
        return 1.0 / np.log2(ranks + 1.0)
    raise ValueError(f"unknown formulation {formulation!r}; choose one of {', '.join(FORMULATIONS)}")


def _check_base(b: float) -> None:
    if not (b > 1.0):
        raise ValueError(f"the rank log base b must be greater than 1, got {b}")


# --- gains -------------------------------------------------------------------------------------------------


def default_weights(formulation: str) -> tuple[float, ...] | None:
    """None (gain = grade, as trec_eval) for log2; the papers' 0,1,10,100 for the 2002 and 2008 forms."""
    return None if formulation == "log2" else PAPER_WEIGHTS


def grade_gains(
    grades,
    weights: Sequence[float] | None = None,
    gain: str = "linear",
    gain_map: Mapping[int, float] | None = None,
) -> np.ndarray:
    """Gain of each grade, any shape in, same shape of float64 out.

    - `weights`: the gain of grades 0, 1, ..., len-1; a grade >= len raises GradeError.
    - `gain_map` (trec_eval's `-mndcg.1=3,2=9`): listed grades get the listed gain, other grades their own
      value.
    - neither: gain = grade.
    - `gain="exponential"` then maps the value v to 2^v - 1 (seed 001/002's exponential gain).
    Negative grades (and UNJUDGED) always have gain 0: trec_eval treats them as unjudged.
    """
    if gain not in GAIN_KINDS:
        raise ValueError(f"unknown gain {gain!r}; choose one of {', '.join(GAIN_KINDS)}")
    if weights is not None and gain_map is not None:
        raise ValueError("give either weights or a gain map, not both")
    grades = np.asarray(grades)
    judged = grades >= 0
    if weights is not None:
        table = np.asarray(weights, dtype=np.float64)
        if table.ndim != 1 or table.size == 0:
            raise ValueError("weights must be a non-empty list of gains, one per grade 0, 1, ...")
        if grades.size:
            top = int(grades.max())
            if top >= table.size:
                shown = ",".join(f"{w:g}" for w in table)
                raise GradeError(
                    top,
                    f"grade {top} is outside the weights {shown} "
                    f"(they give gains for grades 0..{table.size - 1})",
                )
        values = table[np.where(judged, grades, 0)]
    else:
        values = grades.astype(np.float64)
        if gain_map:
            mapped = values.copy()
            for grade, value in gain_map.items():
                mapped[grades == grade] = value
            values = mapped
    if gain == "exponential":
        values = np.exp2(values) - 1.0
    return np.where(judged, values, 0.0)


def ideal_gains(judged_gains, depth: int | None = None) -> np.ndarray:
    """The ideal gain vectors (2002 eq. 4): each row's positive gains sorted descending, then zeros.

    `judged_gains` holds the gains of every judged document of each topic (the recall base, not the run),
    zero padded. Only positive gains enter the ideal, as in trec_eval. `depth` cuts or pads the columns.
    """
    gains = np.asarray(judged_gains, dtype=np.float64)
    gains = np.atleast_2d(gains)
    ideal = -np.sort(-np.where(gains > 0, gains, 0.0), axis=1)
    width = int((ideal > 0).sum(axis=1).max()) if ideal.size else 0
    ideal = ideal[:, :width]
    if depth is not None:
        ideal = _fit(ideal, depth)
    return ideal


def _fit(matrix: np.ndarray, depth: int) -> np.ndarray:
    """Cut or zero-pad the columns to `depth`."""
    if matrix.shape[1] >= depth:
        return matrix[:, :depth]
    return np.pad(matrix, ((0, 0), (0, depth - matrix.shape[1])))


# --- vectors -----------------------------------------------------------------------------------------------


def cumulative_gain(gains) -> np.ndarray:
    """CG[i] = G[1] + ... + G[i] along the last axis."""
    return np.cumsum(np.asarray(gains, dtype=np.float64), axis=-1)


def discounted_cumulative_gain(gains, formulation: str = "2008", b: float = 2.0) -> np.ndarray:
    """The DCG vector of each row (last axis) under a formulation (see rank_discount)."""
    gains = np.asarray(gains, dtype=np.float64)
    return np.cumsum(gains * rank_discount(gains.shape[-1], formulation, b), axis=-1)


def normalized(values, ideal) -> np.ndarray:
    """norm-vect(V, I) = V / I element by element, 0 where the ideal is 0 (an empty recall base): never
    NaN."""
    values = np.asarray(values, dtype=np.float64)
    ideal = np.asarray(ideal, dtype=np.float64)
    out = np.zeros(np.broadcast_shapes(values.shape, ideal.shape))
    np.divide(values, ideal, out=out, where=ideal != 0)
    return out


def avg_pos(vectors, k: int) -> np.ndarray:
    """avg-pos(V, k) = (V[1] + ... + V[k]) / k for each row. A cumulative vector shorter than k is held at
    its last value (nothing more is gained past the end of a list)."""
    vectors = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
    if k < 1:
        raise ValueError(f"avg_pos needs k >= 1, got {k}")
    head = vectors[:, :k].sum(axis=1)
    short = k - min(k, vectors.shape[1])
    if short and vectors.shape[1]:
        head = head + short * vectors[:, -1]
    return head / k


def avg_vect(vectors) -> np.ndarray:
    """avg-vect: the component-wise mean of a set of vectors (rows)."""
    return np.asarray(vectors, dtype=np.float64).mean(axis=0)


# --- scalars at cutoffs ------------------------------------------------------------------------------------


def dcg_at(gains, cutoffs: Iterable[int | None], formulation: str = "log2", b: float = 2.0) -> np.ndarray:
    """DCG of each row at each cutoff (None: the whole row), topics x len(cutoffs), without building the
    vectors: one matrix-vector product per cutoff."""
    gains = np.atleast_2d(np.asarray(gains, dtype=np.float64))
    cutoffs = list(cutoffs)
    depth = gains.shape[1]
    discount = rank_discount(depth, formulation, b)
    out = np.empty((gains.shape[0], len(cutoffs)))
    for column, k in enumerate(cutoffs):
        k = depth if k is None else min(int(k), depth)
        out[:, column] = gains[:, :k] @ discount[:k] if k else 0.0
    return out


def cg_at(gains, cutoffs: Iterable[int | None]) -> np.ndarray:
    """CG of each row at each cutoff (None: the whole row), topics x len(cutoffs)."""
    gains = np.atleast_2d(np.asarray(gains, dtype=np.float64))
    cutoffs = list(cutoffs)
    out = np.empty((gains.shape[0], len(cutoffs)))
    for column, k in enumerate(cutoffs):
        out[:, column] = gains[:, : (gains.shape[1] if k is None else int(k))].sum(axis=1)
    return out


# --- from qrels and a run to ranked grades -----------------------------------------------------------------


@dataclass
class RankedGrades:
    """A run ranked the trec_eval way, as grade matrices.

    topics: row labels. grades: topics x depth, the grade at each rank (UNJUDGED for unjudged documents and
    past the end of a topic's list). judged: topics x max judged, the grades of every judged document of the
    topic (its recall base), UNJUDGED padded. lengths: how many documents each topic retrieved.
    """

    topics: list[str]
    grades: np.ndarray
    judged: np.ndarray
    lengths: np.ndarray


def scatter_grades(
    rows: np.ndarray, columns: np.ndarray, values: np.ndarray, shape: tuple[int, int]
) -> np.ndarray:
    matrix = np.full(shape, UNJUDGED, dtype=np.int64)
    matrix[rows, columns] = values
    return matrix


def _judged_matrix(judged_grades: list) -> np.ndarray:
    """Rows of different lengths (lists or arrays of grades) into one UNJUDGED-padded matrix."""
    counts = np.fromiter((len(g) for g in judged_grades), dtype=np.int64, count=len(judged_grades))
    width = int(counts.max()) if counts.size else 0
    if not counts.sum():
        return np.full((len(judged_grades), width), UNJUDGED, dtype=np.int64)
    flat = np.concatenate([np.asarray(g, dtype=np.int64) for g in judged_grades])
    rows = np.repeat(np.arange(len(judged_grades)), counts)
    starts = np.cumsum(counts) - counts
    columns = np.arange(flat.size) - np.repeat(starts, counts)
    return scatter_grades(rows, columns, flat, (len(judged_grades), width))


def probe_ranks(scores: np.ndarray, probe_scores: np.ndarray, probe_docs, docs) -> np.ndarray:
    """0-based ranks, in trec_eval's order (score descending, ties by document id descending), of some
    documents of one list, found without sorting the documents themselves.

    scores: the list's scores (any order). probe_scores / probe_docs: the documents whose rank is wanted.
    docs: a callable giving the ids of the list's documents (a list or a numpy array, in the order of
    `scores`), asked for only when a probe's score is tied. Ids compare as strcmp does: str by code point,
    bytes by byte, which is the same order for UTF-8.
    """
    ordered = np.sort(scores)
    above = np.searchsorted(ordered, probe_scores, side="right")
    below = np.searchsorted(ordered, probe_scores, side="left")
    ranks = scores.size - above
    tied = np.flatnonzero(above - below > 1)
    if tied.size:
        ids = docs()
        for k in tied.tolist():
            doc = probe_docs[k]
            ranks[k] += sum(1 for i in np.flatnonzero(scores == probe_scores[k]).tolist() if ids[i] > doc)
    return ranks


def rank_run(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    all_topics: bool = False,
) -> RankedGrades:
    """Rank in-memory {topic: {doc: score}} against {topic: {doc: grade}} the way trec_eval does.

    Order: score descending (compared as 32-bit floats, as trec_eval stores them), ties by document id
    descending. Topics: those in both, sorted by id; with
    `all_topics` (trec_eval -c) every qrels topic, a topic missing from the run getting an empty list. Run
    topics without judgments are left out, as in trec_eval.
    """
    if all_topics:
        topics = sorted(qrels)
    else:
        topics = sorted(t for t in run if t in qrels)
    rows: list[np.ndarray] = []
    ranks: list[np.ndarray] = []
    hit_grades: list[list[int]] = []
    judged_grades: list[list[int]] = []
    lengths = np.zeros(len(topics), dtype=np.int64)
    fromiter, float32 = np.fromiter, SCORE_DTYPE
    for row, topic in enumerate(topics):
        judged = qrels[topic]
        judged_grades.append(list(judged.values()))
        listed = run.get(topic)
        if not listed:
            continue
        lengths[row] = len(listed)
        found = list(map(listed.get, judged))
        hits = [i for i, score in enumerate(found) if score is not None]
        if not hits:
            continue
        docs = list(judged)
        probe_docs = [docs[i] for i in hits]
        probe_scores = np.array([found[i] for i in hits], dtype=float32)
        scores = fromiter(listed.values(), float32, len(listed))
        ranks.append(probe_ranks(scores, probe_scores, probe_docs, lambda listed=listed: list(listed)))
        rows.append(np.full(len(hits), row))
        topic_grades = list(judged.values())
        hit_grades.append([topic_grades[i] for i in hits])
    depth = int(lengths.max()) if lengths.size else 0
    if ranks:
        grades = scatter_grades(
            np.concatenate(rows),
            np.concatenate(ranks),
            np.fromiter((g for chunk in hit_grades for g in chunk), dtype=np.int64),
            (len(topics), depth),
        )
    else:
        grades = np.full((len(topics), depth), UNJUDGED, dtype=np.int64)
    return RankedGrades(topics, grades, _judged_matrix(judged_grades), lengths)


def id_hashes(ids: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each id of a numpy 'S' array, the same whatever the array's width (ids hold no NUL
    byte, so all-zero words are padding and skipped)."""
    width = -(-max(ids.dtype.itemsize, 1) // 8) * 8
    if ids.dtype.itemsize != width:
        ids = ids.astype(f"S{width}")
    words = np.ascontiguousarray(ids).view("<u8").reshape(ids.size, width // 8)
    h = np.full(ids.size, 0x9E3779B97F4A7C15, dtype=np.uint64)
    for j in range(words.shape[1]):
        word = words[:, j]
        mixed = (h ^ word) * np.uint64(0xBF58476D1CE4E5B9)
        mixed ^= mixed >> np.uint64(31)
        h = np.where(word != 0, mixed, h)
    return h


def topic_keys(hashes: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """(topic row, id hash) as one uint64: the row in the high 24 bits, so that keys sort topic by topic
    and a binary search over them stays within one topic's few cache lines."""
    return (rows.astype(np.uint64) << np.uint64(40)) | (hashes >> np.uint64(24))


def score_order_keys(scores: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """uint64 keys that sort by (owner, score as float32): the float's bits made order-preserving in the
    low 32 bits. -0.0 is made +0.0 first, since trec_eval's comparison ties them."""
    bits = (scores.astype(SCORE_DTYPE) + SCORE_DTYPE(0.0)).view(np.uint32)
    ordered = np.where(bits >> np.uint32(31), ~bits, bits | np.uint32(0x80000000))
    return (owner.astype(np.uint64) << np.uint64(32)) | ordered.astype(np.uint64)


def rank_columns(qrels, run, all_topics: bool = False) -> RankedGrades:
    """Like rank_run, for qrels and a run held as columns (trec_io.read_qrels_columns and
    read_run_columns give them): `qrels.topics[i]` owns `qrels.docs[qrels.bounds[i]:qrels.bounds[i+1]]`
    (numpy 'S', each document once) and the same slice of `qrels.grades`; `run.topics[i]` owns the same
    slices of `run.docs` and `run.scores`.

    Whole-array work, no Python per topic: documents are joined by a 64-bit hash of (topic, id), every hit
    confirmed byte for byte; ranks come from one sort of (topic, score) keys, and only a hit whose score
    is tied looks at the ids of its tied group."""
    judged_at = {topic: i for i, topic in enumerate(qrels.topics)}
    topics = sorted(judged_at) if all_topics else sorted(t for t in run.topics if t in judged_at)
    row_of = {topic: row for row, topic in enumerate(topics)}
    judged_sizes, listed_sizes = np.diff(qrels.bounds), np.diff(run.bounds)
    judged_row = np.repeat(np.array([row_of.get(t, -1) for t in qrels.topics], dtype=np.int64), judged_sizes)
    listed_row = np.repeat(np.array([row_of.get(t, -1) for t in run.topics], dtype=np.int64), listed_sizes)

    # The recall base of each output row.
    kept = np.flatnonzero(judged_row >= 0)
    position = np.arange(judged_row.size) - np.repeat(qrels.bounds[:-1], judged_sizes)
    width = int(position[kept].max()) + 1 if kept.size else 0
    judged = scatter_grades(judged_row[kept], position[kept], qrels.grades[kept], (len(topics), width))
    lengths = np.zeros(len(topics), dtype=np.int64)
    listed_topic_rows = np.array([row_of.get(t, -1) for t in run.topics], dtype=np.int64)
    lengths[listed_topic_rows[listed_topic_rows >= 0]] = listed_sizes[listed_topic_rows >= 0]
    depth = int(lengths.max()) if lengths.size else 0

    # Join: which run rows are judged, and with which qrels row. Rows of topics not evaluated get the
    # row 2^24 - 1, which no evaluated topic has (fewer than 2^24 - 1 topics are checked below).
    if len(topics) >= (1 << 24) - 1:
        raise ValueError("rank_columns handles fewer than 16,777,215 topics")
    outside = (1 << 24) - 1
    judged_hashes = getattr(qrels, "hashes", None)
    judged_hashes = id_hashes(qrels.docs) if judged_hashes is None else judged_hashes
    listed_hashes = getattr(run, "hashes", None)
    listed_hashes = id_hashes(run.docs) if listed_hashes is None else listed_hashes
    judged_keys = topic_keys(judged_hashes[kept], judged_row[kept])
    by_key = np.argsort(judged_keys)
    judged_keys = judged_keys[by_key]
    listed_keys = topic_keys(listed_hashes, np.where(listed_row >= 0, listed_row, outside))
    if judged_keys.size:
        where = np.minimum(np.searchsorted(judged_keys, listed_keys), judged_keys.size - 1)
        hits = np.flatnonzero(judged_keys[where] == listed_keys)
        match = kept[by_key[where[hits]]]
        # With the judged keys all distinct, an equal key whose ids differ is simply not a judged document.
        confirmed = qrels.docs[match] == run.docs[hits]
        hits, match = hits[confirmed], match[confirmed]
    else:
        hits = match = np.zeros(0, dtype=np.int64)
    if (judged_keys[1:] == judged_keys[:-1]).any():
        hits, match = _join_by_ids(qrels, run, judged_row)  # two judged ids of a topic share a hash

    # Ranks: documents above a hit in its topic, then the tied ones with a greater id (trec_eval's order).
    owner = np.repeat(np.arange(listed_sizes.size), listed_sizes)
    keys = score_order_keys(run.scores, owner)
    ordered_keys = np.sort(keys)
    above = np.searchsorted(ordered_keys, keys[hits], side="right")
    below = np.searchsorted(ordered_keys, keys[hits], side="left")
    ranks = run.bounds[1:][owner[hits]] - above
    for k in np.flatnonzero(above - below > 1).tolist():
        hit = hits[k]
        start, stop = run.bounds[owner[hit]], run.bounds[owner[hit] + 1]
        tied = start + np.flatnonzero(keys[start:stop] == keys[hit])
        ranks[k] += int(np.count_nonzero(run.docs[tied] > run.docs[hit]))
    grades = scatter_grades(listed_row[hits], ranks, qrels.grades[match], (len(topics), depth))
    return RankedGrades(topics, grades, judged, lengths)


def _join_by_ids(qrels, run, judged_row) -> tuple[np.ndarray, np.ndarray]:
    """The join of rank_columns by the ids themselves, topic by topic (slow, exact)."""
    hits, match = [], []
    listed_at = {topic: i for i, topic in enumerate(run.topics)}
    for q, topic in enumerate(qrels.topics):
        i = listed_at.get(topic)
        first, last = int(qrels.bounds[q]), int(qrels.bounds[q + 1])
        if i is None or last == first or judged_row[first] < 0:
            continue
        start, stop = int(run.bounds[i]), int(run.bounds[i + 1])
        order = np.argsort(qrels.docs[first:last]) + first
        listed = run.docs[start:stop]
        where = np.minimum(np.searchsorted(qrels.docs[order], listed), last - first - 1)
        found = np.flatnonzero(qrels.docs[order[where]] == listed)
        hits.append(found + start)
        match.append(order[where[found]])
    if not hits:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(hits), np.concatenate(match)


# --- the usual scalars in one call -------------------------------------------------------------------------


def gain_matrices(
    ranked: RankedGrades,
    weights: Sequence[float] | None = None,
    gain: str = "linear",
    gain_map: Mapping[int, float] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(gains, ideal): the ranked gain matrix (topics x depth) and the ideal gain matrix (topics x size of
    the largest recall base), both zero padded, ready for cumulative_gain, discounted_cumulative_gain,
    dcg_at and normalized."""
    gains = grade_gains(ranked.grades, weights, gain, gain_map)
    return gains, ideal_gains(grade_gains(ranked.judged, weights, gain, gain_map))


def ndcg_scores(
    ranked: RankedGrades,
    cutoffs: Iterable[int | None],
    formulation: str = "log2",
    b: float = 2.0,
    weights: Sequence[float] | None = None,
    gain: str = "linear",
    gain_map: Mapping[int, float] | None = None,
) -> np.ndarray:
    """nDCG of each topic at each cutoff (None: trec_eval's `ndcg`, the whole list against the whole ideal),
    topics x len(cutoffs); 0 where the topic has no relevant document."""
    cutoffs = list(cutoffs)
    gains, ideal = gain_matrices(ranked, weights, gain, gain_map)
    return normalized(dcg_at(gains, cutoffs, formulation, b), dcg_at(ideal, cutoffs, formulation, b))
