"""score_sessions builds the curve matrices a block of sessions at a time when every segment is full (the
defaults), large batches on two threads: the blocks must give, to the bit, what the one-pass construction
gives, across block boundaries and across the two threads' halves."""

import numpy as np
import pytest

from scoring.lib import session
from scoring.lib.session import SessionParams, encode_sessions, score_sessions

from .session_reference import reference_session

DOCS = [f"d{i}" for i in range(14)]  # d12 and d13 are never judged


def many_sessions(n_sessions, seed=11, negative=False):
    """Sessions of 1-11 queries over three scenarios, enough of them to fill several blocks at top 6."""
    rng = np.random.default_rng(seed)
    low = -1 if negative else 0
    qrels = {t: {d: int(rng.integers(low, 4)) for d in DOCS[:12] if rng.random() < 0.7} for t in "ABC"}
    topics = [str(rng.choice(list("ABCD"))) for _ in range(n_sessions)]  # D has no judgments
    results = [
        [list(rng.choice(DOCS, size=rng.integers(0, 9), replace=False)) for _ in range(rng.integers(1, 12))]
        for _ in range(n_sessions)
    ]
    return topics, results, qrels


@pytest.mark.parametrize(
    ("options", "negative_grades"),
    [
        ({}, False),
        ({"pad_to": 14}, False),
        ({"duplicates": "first", "b": 3.0, "bq": 9.0}, False),
        ({}, True),
        ({"formulation": "kanoulas2011"}, True),
        ({"formulation": "2002", "weights": (-1.0, 2.0, -3.0, 5.0)}, False),
        ({"formulation": "log2"}, False),
    ],
)
@pytest.mark.parametrize("threads", [1, 2])
def test_curves_built_block_by_block_equal_the_one_pass_construction_to_the_bit(
    options, negative_grades, threads, monkeypatch
):
    # Two threads for this batch of 4000 (real batches go on two threads from 20,000 sessions).
    monkeypatch.setattr(session.prepared, "_PARALLEL_SESSIONS", 1 if threads == 2 else 10**9)
    monkeypatch.setattr(session.prepared.os, "cpu_count", lambda: 2)
    topics, results, qrels = many_sessions(4000, negative=negative_grades)
    params = SessionParams(top=6, **options)
    batch = encode_sessions(topics, results, qrels, depth=6)
    prep = session.prepared.Prepared(batch, params)
    rank_disc = session.score._rank_discounts(prep.width, params.formulation, params.b)
    query_disc = session.score._query_discounts(prep.max_queries, params.formulation, params.bq)
    width = max((params.pad_to or 0) * params.top, int(prep.lengths.max()))
    assert prep.inside is None and len(topics) > 2 * (
        session.prepared._BLOCK_CELLS // width
    )  # blocks, and a partial one

    assert (
        len(session.prepared._parallel_ranges(len(topics), session.prepared._BLOCK_CELLS // width)) == threads
    )
    curve, ideal, normalized = prep.curves(rank_disc, query_disc, width)

    one_pass_curve = prep.curve(rank_disc, query_disc, width)
    one_pass_ideal = prep.ideal_curve(rank_disc, query_disc, width)
    one_pass_normalized = session.prepared._normalize(
        one_pass_curve, one_pass_ideal, out=np.empty_like(one_pass_curve)
    )
    for built, expected in [
        (curve, one_pass_curve),
        (ideal, one_pass_ideal),
        (normalized, one_pass_normalized),
    ]:
        assert built.shape == expected.shape and built.flags.c_contiguous
        assert built.tobytes() == expected.tobytes()  # bit for bit, signed zeros included


def test_sessions_on_both_sides_of_a_block_boundary_equal_the_reference():
    topics, results, qrels = many_sessions(3000, seed=12)
    scores = score_sessions(encode_sessions(topics, results, qrels, depth=6), SessionParams(top=6, pad_to=12))
    width = scores.curve.shape[1]
    step = session.prepared._BLOCK_CELLS // width
    assert len(topics) > step
    for s in [0, step - 1, step, step + 1, len(topics) - 1]:
        expected = reference_session(qrels.get(topics[s], {}), results[s], top=6, width=width)
        for name in ("curve", "ideal", "normalized"):
            np.testing.assert_allclose(getattr(scores, name)[s], expected[name], rtol=1e-9, atol=1e-9)
