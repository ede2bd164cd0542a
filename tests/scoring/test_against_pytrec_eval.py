"""Random qrels and runs: our ndcg and ndcg_cut_K equal pytrec_eval's (trec_eval's C code) per topic.

The generated cases have tied scores, unjudged documents, negative grades, topics without a relevant
document, run topics without judgments and judged topics missing from the run.
"""

import numpy as np
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.lib import metrics
from scoring.lib.trec_io import QrelsColumns, RunColumns

CUTOFFS = (1, 3, 5, 10)
MEASURES = {"ndcg", "ndcg_cut." + ",".join(str(k) for k in CUTOFFS)}

doc_ids = st.text(alphabet="abAB09-é", min_size=1, max_size=3)
topic_ids = st.sampled_from(["1", "2", "10", "q3"])
grades = st.integers(min_value=-2, max_value=4)
scores = st.one_of(
    st.sampled_from([0.0, 1.0, 0.5, -1.0, 2.25]),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False),
)
qrels_strategy = st.dictionaries(
    topic_ids, st.dictionaries(doc_ids, grades, min_size=1, max_size=12), max_size=4
)
run_strategy = st.dictionaries(
    topic_ids, st.dictionaries(doc_ids, scores, min_size=1, max_size=15), max_size=4
)


ZERO = {"ndcg": 0.0, **{f"ndcg_cut_{k}": 0.0 for k in CUTOFFS}}


def reference(qrels, run):
    """pytrec_eval's values. pytrec_eval-terrier 0.5.11 reads freed memory (and crashes at random) on a
    topic whose judgments are all negative, so those topics are not given to it: they have no relevant
    document and trec_eval scores them 0, which is what the reference then says."""
    usable = {topic: judged for topic, judged in qrels.items() if max(judged.values()) >= 0}
    expected = pytrec_eval.RelevanceEvaluator(usable, MEASURES).evaluate(run) if usable else {}
    for topic in qrels.keys() - usable.keys():
        if topic in run:
            expected[topic] = dict(ZERO)
    return expected


def compare(ranked, expected):
    assert sorted(ranked.topics) == sorted(expected)
    ours = metrics.ndcg_scores(ranked, [None, *CUTOFFS])
    for row, topic in enumerate(ranked.topics):
        theirs = [expected[topic]["ndcg"]] + [expected[topic][f"ndcg_cut_{k}"] for k in CUTOFFS]
        np.testing.assert_allclose(ours[row], theirs, rtol=0, atol=1e-9, err_msg=f"topic {topic}")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels=qrels_strategy, run=run_strategy)
def test_ndcg_from_dicts_agrees_with_pytrec_eval(qrels, run):
    compare(metrics.rank_run(qrels, run), reference(qrels, run))


def as_columns(qrels, run):
    """The dicts as the column form trec_io's readers give (qrels docs sorted within a topic)."""
    judged = {
        topic: sorted((doc.encode(), grade) for doc, grade in docs.items()) for topic, docs in qrels.items()
    }
    qrels_columns = QrelsColumns(
        list(judged),
        np.cumsum([0] + [len(pairs) for pairs in judged.values()]),
        np.array([doc for pairs in judged.values() for doc, _ in pairs], dtype="S"),
        np.array([grade for pairs in judged.values() for _, grade in pairs], dtype=np.int64),
        np.zeros(0, dtype=np.int64),
    )
    run_columns = RunColumns(
        list(run),
        np.cumsum([0] + [len(docs) for docs in run.values()]),
        np.array([doc.encode() for docs in run.values() for doc in docs], dtype="S"),
        np.array([score for docs in run.values() for score in docs.values()], dtype=np.float64),
        np.zeros(0, dtype=np.int64),
    )
    return qrels_columns, run_columns


@settings(max_examples=100, deadline=None)
@given(qrels=qrels_strategy, run=run_strategy)
def test_ndcg_from_columns_agrees_with_pytrec_eval(qrels, run):
    compare(metrics.rank_columns(*as_columns(qrels, run)), reference(qrels, run))


@settings(max_examples=100, deadline=None)
@given(qrels=qrels_strategy, run=run_strategy)
def test_with_all_topics_a_topic_missing_from_the_run_scores_zero(qrels, run):
    ranked = metrics.rank_run(qrels, run, all_topics=True)
    assert ranked.topics == sorted(qrels)
    values = metrics.ndcg_scores(ranked, [None, 10])
    expected = reference(qrels, run)
    for row, topic in enumerate(ranked.topics):
        if topic in expected:
            assert values[row, 0] == pytest.approx(expected[topic]["ndcg"], abs=1e-9)
        else:
            assert values[row].tolist() == [0.0, 0.0]


@settings(max_examples=50, deadline=None)
@given(qrels=qrels_strategy, run=run_strategy)
def test_a_hash_collision_falls_back_to_matching_ids(qrels, run):
    real = metrics.id_hashes
    try:
        metrics.id_hashes = lambda ids: np.zeros(ids.size, dtype=np.uint64)  # every id collides
        ranked = metrics.rank_columns(*as_columns(qrels, run))
    finally:
        metrics.id_hashes = real
    compare(ranked, reference(qrels, run))
