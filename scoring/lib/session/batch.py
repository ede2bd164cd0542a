"""Sessions encoded once as integer arrays (`SessionBatch`, built by `encode_sessions`), so that the batch
can be scored with any parameters without touching a string again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, count
from typing import TypeVar

import numpy as np

_NO_GRADE = np.iinfo(np.int64).min  # encode_sessions' marker for an unjudged document

# A document id: any hashable (the command line's are strings, the web app's are primary keys).
Doc = TypeVar("Doc", bound=Hashable)


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


def encode_sessions(
    topics: Sequence[str],
    results: Sequence[Sequence[Sequence[Doc]]],
    qrels: Mapping[str, Mapping[Doc, int]],
    *,
    depth: int,
    scanned_to: Sequence[Sequence[int | None]] | None = None,
) -> SessionBatch:
    """Turn sessions into a `SessionBatch`: session s has scenario topics[s] and result lists results[s]
    (one list of document ids per query, in order), optionally each query's scanned depth.

    Only the first `depth` results of each list are kept, so depth must cover the deepest cut the batch
    will be scored at (top X, or the deepest scanned_to). A scenario absent from qrels has an empty recall
    base.
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
    code_of: dict[Doc, int] = defaultdict(count().__next__)
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
