"""`encode_sessions` (one dict pass over the shown documents, grades by array keys) gives exactly the batch
of the per-document loop it replaced, kept here as the reference."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.lib.session import encode_sessions
from scoring.lib.session.batch import _NO_GRADE

DOCS = ["a", "b", "c", "d", "é", "doc-1", "doc-2"]


def reference_encode(topics, results, qrels, depth):
    shown_docs, shown_grades, list_lengths = [], [], []
    for topic, queries in zip(topics, results, strict=True):
        grade_of = qrels.get(topic, {}).get
        for ranked in queries:
            shown = ranked[:depth]
            list_lengths.append(len(shown))
            shown_docs.extend(shown)
            shown_grades.extend([grade_of(doc, _NO_GRADE) for doc in shown])
    code_of = {doc: code for code, doc in enumerate(dict.fromkeys(shown_docs))}
    lengths = np.asarray(list_lengths, dtype=np.int64)
    row = len(lengths)
    cells = np.repeat(np.arange(row) * depth - np.cumsum(lengths) + lengths, lengths) + np.arange(
        len(shown_docs)
    )
    docs = np.full(row * depth, -1, dtype=np.int64)
    docs[cells] = [code_of[doc] for doc in shown_docs]
    flat = np.asarray(shown_grades, dtype=np.int64)
    judged = np.zeros(row * depth, dtype=bool)
    judged[cells] = flat != _NO_GRADE
    grades = np.zeros(row * depth, dtype=np.int64)
    grades[cells] = np.where(flat != _NO_GRADE, flat, 0)
    return docs.reshape(row, depth), grades.reshape(row, depth), judged.reshape(row, depth)


result_lists = st.lists(st.sampled_from(DOCS), min_size=0, max_size=6, unique=True)
sessions = st.lists(
    st.tuples(
        st.sampled_from(["t1", "t2", "t3", "unjudged"]), st.lists(result_lists, min_size=1, max_size=4)
    ),
    min_size=1,
    max_size=8,
)
judgments = st.dictionaries(
    st.sampled_from(["t1", "t2", "t3"]),
    st.dictionaries(st.sampled_from(DOCS + ["never-shown"]), st.integers(-2, 3)),
)


@settings(max_examples=300, deadline=None)
@given(sessions=sessions, qrels=judgments, depth=st.integers(1, 7))
def test_encode_sessions_equals_the_per_document_loop(sessions, qrels, depth):
    topics = [topic for topic, _ in sessions]
    results = [queries for _, queries in sessions]
    batch = encode_sessions(topics, results, qrels, depth=depth)
    docs, grades, judged = reference_encode(topics, results, qrels, depth)
    assert np.array_equal(batch.docs, docs)
    assert np.array_equal(batch.grades, grades)
    assert np.array_equal(batch.judged, judged)


def test_a_large_sparse_batch_looks_grades_up_by_sorted_keys():
    """Many scenarios times many documents: the grades come from the sorted keys, not a dense table."""
    rng = np.random.default_rng(3)
    topics = [f"t{t}" for t in rng.integers(0, 400, size=300)]
    results = [[[f"d{x}" for x in rng.choice(5000, size=5, replace=False)]] for _ in topics]
    qrels = {
        f"t{t}": {
            f"d{x}": int(g) for x, g in zip(rng.choice(5000, 300), rng.integers(0, 4, 300), strict=True)
        }
        for t in range(400)
    }
    batch = encode_sessions(topics, results, qrels, depth=5)
    docs, grades, judged = reference_encode(topics, results, qrels, 5)
    assert np.array_equal(batch.docs, docs) and np.array_equal(batch.grades, grades)
    assert np.array_equal(batch.judged, judged) and judged.sum() > 0
