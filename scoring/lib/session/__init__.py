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

One module per step, every public name re-exported here: params (the options and default weights), batch
(the encoded sessions), prepared (gains, segments, ideal vectors; the summaries and curves), score
(`score_sessions`, `session_grid` and the discounts).
"""

from .batch import SessionBatch, encode_sessions
from .params import (
    DUPLICATES,
    FORMULATIONS,
    PAPER_WEIGHTS,
    SCANS,
    SHORT_LISTS,
    SUMMARIES,
    SUMMARY_LABELS,
    SessionParams,
    default_weights,
)
from .score import SessionGrid, SessionScores, score_sessions, session_grid

__all__ = [
    "DUPLICATES",
    "FORMULATIONS",
    "PAPER_WEIGHTS",
    "SCANS",
    "SHORT_LISTS",
    "SUMMARIES",
    "SUMMARY_LABELS",
    "SessionBatch",
    "SessionGrid",
    "SessionParams",
    "SessionScores",
    "default_weights",
    "encode_sessions",
    "score_sessions",
    "session_grid",
]
