"""Properties of session sDCG that must hold for any sessions, checked with hypothesis, and the batch
against the per-session reference in session_reference.py."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.lib.session import SessionParams, encode_sessions, score_sessions, session_grid
from scoring.lib.trec_io import read_qrels

from .session_reference import reference_session

DOCS = [f"d{i}" for i in range(12)]  # d10 and d11 are never judged
FORMULATIONS = ["2008", "2002", "log2", "kanoulas2011"]
SLOW = settings(max_examples=120, deadline=None)


def result_list(max_size=7):
    """A ranked list shows a document once."""
    return st.lists(st.sampled_from(DOCS), max_size=max_size, unique=True)


judgments = st.dictionaries(st.sampled_from(DOCS[:10]), st.integers(0, 3), max_size=10)
sessions = st.lists(result_list(), min_size=1, max_size=5)
bases = st.floats(1.5, 10)


@st.composite
def scored_batches(draw, min_grade=0):
    """A few sessions over two scenarios, with options drawn too."""
    qrels = {
        topic: draw(st.dictionaries(st.sampled_from(DOCS[:10]), st.integers(min_grade, 3), max_size=10))
        for topic in ("A", "B")
    }
    batch = draw(st.lists(st.tuples(st.sampled_from(["A", "B", "C"]), sessions), min_size=1, max_size=4))
    options = {
        "b": draw(bases),
        "bq": draw(bases),
        "top": draw(st.integers(1, 6)),
        "formulation": draw(st.sampled_from(FORMULATIONS)),
        "duplicates": draw(st.sampled_from(["every", "first"])),
        "short_lists": draw(st.sampled_from(["pad", "as_is"])),
    }
    return qrels, batch, options


def score(qrels, batch, **options):
    topics = [topic for topic, _ in batch]
    lists = [queries for _, queries in batch]
    encoded = encode_sessions(topics, lists, qrels, depth=options.get("top", 10))
    return score_sessions(encoded, SessionParams(**options))


@SLOW
@given(scored_batches())
def test_with_padded_lists_the_ideal_bounds_every_session_curve(case):
    qrels, batch, options = case
    scores = score(qrels, batch, **(options | {"short_lists": "pad"}))
    assert (scores.curve <= scores.ideal + 1e-9).all()
    assert (scores.normalized >= 0).all() and (scores.normalized <= 1 + 1e-12).all()
    assert (scores.normalized_final >= 0).all() and (scores.normalized_final <= 1 + 1e-12).all()
    assert not np.isnan(scores.normalized).any()


@SLOW
@given(scored_batches())
def test_with_non_negative_weights_first_never_scores_above_every(case):
    qrels, batch, options = case
    every = score(qrels, batch, **(options | {"duplicates": "every"}))
    first = score(qrels, batch, **(options | {"duplicates": "first"}))
    assert (first.curve <= every.curve + 1e-9).all()
    assert (first.final <= every.final + 1e-9).all()
    np.testing.assert_array_equal(first.ideal, every.ideal)


@SLOW
@given(judgments, sessions, st.integers(0, 4), st.sampled_from(FORMULATIONS), st.integers(1, 5))
def test_holding_a_session_after_its_last_query_keeps_its_final_value(
    judged, queries, extra, formulation, top
):
    alone = score({"T": judged}, [("T", queries)], top=top, formulation=formulation)
    held = score(
        {"T": judged}, [("T", queries)], top=top, formulation=formulation, pad_to=len(queries) + extra
    )
    end = len(queries) * top
    np.testing.assert_allclose(held.curve[0, :end], alone.curve[0])
    np.testing.assert_allclose(held.curve[0, end - 1 :], held.final[0])
    np.testing.assert_allclose(held.ideal[0, end - 1 :], held.ideal[0, end - 1])
    assert held.final[0] == pytest.approx(alone.final[0])
    assert held.average[0] == pytest.approx(alone.average[0])


@SLOW
@given(scored_batches(min_grade=-1), st.booleans())
def test_the_batch_equals_the_per_session_reference(case, observed):
    qrels, batch, options = case
    topics = [topic for topic, _ in batch]
    lists = [queries for _, queries in batch]
    scanned = [[(len(topic) * 7 + q * 3) % 8 for q in range(len(queries))] for topic, queries in batch]
    depth = 8 if observed else options["top"]
    encoded = encode_sessions(topics, lists, qrels, depth=depth, scanned_to=scanned)
    params = SessionParams(**options, scan="observed" if observed else "fixed")
    scores = score_sessions(encoded, params)
    width = scores.curve.shape[1]
    for s, (topic, queries) in enumerate(batch):
        expected = reference_session(
            qrels.get(topic, {}), queries, **options, scanned_to=scanned[s] if observed else None, width=width
        )
        for name in ("curve", "ideal", "normalized"):
            np.testing.assert_allclose(getattr(scores, name)[s], expected[name], rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(scores.per_query_of(s), expected["per_query"], rtol=1e-9, atol=1e-9)
        for name in ("final", "normalized_final", "last_query", "best_query", "average"):
            assert getattr(scores, name)[s] == pytest.approx(expected[name], rel=1e-9, abs=1e-9), name
        assert scores.lengths[s] <= width


@settings(max_examples=40, deadline=None)
@given(scored_batches(), st.lists(bases, min_size=1, max_size=3), st.lists(bases, min_size=1, max_size=3))
def test_each_grid_point_equals_a_single_run(case, b_values, bq_values):
    qrels, batch, options = case
    topics = [topic for topic, _ in batch]
    encoded = encode_sessions(topics, [queries for _, queries in batch], qrels, depth=options["top"])
    grid = session_grid(encoded, SessionParams(**options), b_values=b_values, bq_values=bq_values)
    for i, b in enumerate(b_values):
        for j, bq in enumerate(bq_values):
            single = score_sessions(encoded, SessionParams(**(options | {"b": b, "bq": bq})), curves=False)
            for name in ("final", "normalized_final", "last_query", "best_query", "average"):
                np.testing.assert_allclose(getattr(grid, name)[i, j], getattr(single, name), rtol=1e-12)


@pytest.mark.parametrize("bq", [1.0, 0.5, 1000.0, 5000.0])
def test_a_query_base_outside_1_to_1000_is_refused(bq):
    with pytest.raises(ValueError, match="1 < bq < 1000"):
        SessionParams(bq=bq)


def test_a_grade_without_a_weight_is_refused():
    encoded = encode_sessions(["T"], [[["a"]]], {"T": {"a": 4}}, depth=10)
    with pytest.raises(ValueError, match="grade 4 is outside the weights"):
        score_sessions(encoded)


def test_a_negative_grade_is_unjudged_under_the_weights_and_costs_under_kanoulas2011():
    encoded = encode_sessions(["T"], [[["a", "b"]]], {"T": {"a": -1, "b": 1}}, depth=2)
    weighted = score_sessions(encoded, SessionParams(top=2))
    assert weighted.curve[0].tolist() == [0.0, 1.0 / (1 + 1)]
    kanoulas = score_sessions(encoded, SessionParams(top=2, formulation="kanoulas2011"))
    assert kanoulas.curve[0, 0] == -0.5


def test_pad_to_shorter_than_the_longest_session_is_refused():
    encoded = encode_sessions(["T"], [[["a"], ["b"]]], {"T": {"a": 1}}, depth=10)
    with pytest.raises(ValueError, match="pad_to 1 is shorter"):
        score_sessions(encoded, SessionParams(pad_to=1))


def test_an_empty_recall_base_gives_zero_not_nan():
    encoded = encode_sessions(["T"], [[["a", "b"]]], {}, depth=10)
    scores = score_sessions(encoded)
    assert scores.normalized_final[0] == 0 and not np.isnan(scores.normalized).any()


@pytest.mark.parametrize("pad_to", [None, 13])
def test_a_large_batch_over_few_scenarios_equals_the_reference(pad_to):
    # Many sessions over few scenarios take the shortcut that copies one ideal curve per (scenario, length).
    rng = np.random.default_rng(7)
    qrels = {t: {d: int(rng.integers(0, 4)) for d in DOCS[:10]} for t in ("A", "B", "C")}
    batch = [
        (
            str(rng.choice(["A", "B", "C"])),
            [
                list(rng.choice(DOCS, size=rng.integers(0, 8), replace=False))
                for _ in range(rng.integers(1, 12))
            ],
        )
        for _ in range(300)
    ]
    scores = score(qrels, batch, top=6, pad_to=pad_to)
    assert scores.curve.shape == (300, 6 * (pad_to or max(len(queries) for _, queries in batch)))
    for s, (topic, queries) in enumerate(batch):
        expected = reference_session(qrels[topic], queries, top=6, width=scores.curve.shape[1])
        for name in ("curve", "ideal", "normalized"):
            np.testing.assert_allclose(getattr(scores, name)[s], expected[name], rtol=1e-9, atol=1e-9)
        assert scores.average[s] == pytest.approx(expected["average"], rel=1e-9)


def trec_2012_sessions(folder):
    """The TREC 2012 Session Track log as (topic, result lists), first showings only within a list."""
    root = ET.parse(folder / "sessiontrack2012.xml").getroot()
    sessions = []
    for session in root.iter("session"):
        queries = [
            list(dict.fromkeys(doc.text.strip() for doc in interaction.iter("clueweb09id")))
            for interaction in session.iter("interaction")
        ]
        if queries:
            sessions.append((session.find("topic").get("num"), queries))
    return sessions


@pytest.mark.needs_data
@pytest.mark.parametrize("formulation", ["2008", "kanoulas2011"])
def test_the_trec_2012_session_log_matches_the_reference(shared_data, formulation):
    folder = shared_data / "peer-data" / "trec-session-2012"
    qrels = read_qrels(folder / "qrels2012.txt")
    batch = trec_2012_sessions(folder)
    assert len(batch) == 98
    # Grades -2..4: five weights; -2 (spam) is unjudged under weights and costs 2^-2 - 1 under kanoulas2011.
    options = {"weights": (0, 1, 10, 100, 1000), "formulation": formulation}
    scores = score(qrels, batch, **options)
    for s, (topic, queries) in enumerate(batch):
        expected = reference_session(qrels.get(topic, {}), queries, **options, width=scores.curve.shape[1])
        np.testing.assert_allclose(scores.curve[s], expected["curve"], rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(scores.ideal[s], expected["ideal"], rtol=1e-9, atol=1e-9)
        assert scores.average[s] == pytest.approx(expected["average"], rel=1e-9)
    assert (scores.normalized_final <= 1).all() and not np.isnan(scores.normalized).any()
    if formulation == "2008":
        assert (scores.normalized_final >= 0).all() and scores.final.max() > 0
