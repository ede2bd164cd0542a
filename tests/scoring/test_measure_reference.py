"""Every measure against a plain, independent implementation written from its published definition.

- Kanoulas forms and per-query aggregates: the definitions of Jiang & Allan's public session metrics (CHIIR
  2016, SDCG / NSDCG / SDCGQ / SQMetric over NDCG), rewritten here as straightforward loops (their code is
  Python 2 and not installable): equal to 1e-9.
- esNDCG: the sum over every path of the browsing model, enumerated one by one: equal to 1e-12; and the exact
  value inside the 95% interval of 10,000 sampled paths.
- sRBP: the examination probability of each (query, rank) built step by step from the user model (continue
  with p; then down with b, else to the next query's first result): equal to 1e-12.
- TBG and U: the trail written out as a list of timed events, then summed: equal to 1e-12.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.lib.session import encode_sessions
from scoring.lib.session_measures import MeasureParams, TrailQuery, esndcg_monte_carlo, score_measures

DOCS = [f"d{i}" for i in range(12)]


@st.composite
def sessions(draw, max_queries=4, max_len=6):
    grades = {
        doc: draw(st.integers(0, 3))
        for doc in draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=10))
    }
    n = draw(st.integers(1, max_queries))
    lists = [
        draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=0, max_size=max_len)) for _ in range(n)
    ]
    return grades, lists


def batch_of(grades, lists, depth):
    return encode_sessions(["T"], [lists], {"T": grades}, depth=depth)


# --- references ---------------------------------------------------------------------------------------------


def ref_dcg(grades, ranked, k, b=2.0):
    total = 0.0
    for rank, doc in enumerate(ranked[:k], start=1):
        total += (2 ** grades.get(doc, 0) - 1.0) * math.log(b) / math.log(rank + b - 1)
    return total


def ref_sdcg(grades, lists, k, b=2.0, bq=4.0):
    return sum(
        ref_dcg(grades, ranked, k, b) * math.log(bq) / math.log(q + bq - 1)
        for q, ranked in enumerate(lists, start=1)
    )


def ref_ideal(grades):
    return sorted(grades, key=lambda doc: grades[doc], reverse=True)


def ref_ndcg(grades, ranked, k):
    ideal = ref_dcg(grades, ref_ideal(grades), k)
    return ref_dcg(grades, ranked, k) / ideal if ideal else 0.0


def ref_kanoulas(grades, lists, k, b=2.0, bq=4.0):
    sdcg = ref_sdcg(grades, lists, k, b, bq)
    ideal = ref_sdcg(grades, [ref_ideal(grades)] * len(lists), k, b, bq)
    per_query = [ref_ndcg(grades, ranked, k) for ranked in lists]
    return {
        "sdcg_per_query": sdcg / len(lists),
        "nsdcg": sdcg / ideal if ideal else 0.0,
        "ndcg_mean": sum(per_query) / len(per_query),
        "ndcg_max": max(per_query),
        "ndcg_first": per_query[0],
        "ndcg_last": per_query[-1],
    }


def ref_esndcg(grades, lists, k, p_ref, p_down):
    ideal = [2**g - 1.0 for g in sorted(grades.values(), reverse=True) if g > 0]

    def dcg(gains):
        return sum(g / math.log2(i + 2) for i, g in enumerate(gains))

    def laws(ranked):
        depth = min(len(ranked), k)
        if depth == 0:
            return [(0, 1.0)]
        return [(n, p_down ** (n - 1) * ((1 - p_down) if n < depth else 1.0)) for n in range(1, depth + 1)]

    total, n = 0.0, len(lists)
    for m in range(1, n + 1):
        p_m = p_ref ** (m - 1) * ((1 - p_ref) if m < n else 1.0)
        for cut in itertools.product(*[laws(ranked) for ranked in lists[:m]]):
            path = [doc for ranked, (seen, _) in zip(lists, cut, strict=False) for doc in ranked[:seen]]
            best = dcg(ideal[: len(path)])
            value = dcg([2 ** grades.get(doc, 0) - 1.0 for doc in path]) / best if best else 0.0
            total += p_m * math.prod(p for _, p in cut) * value
    return total


def ref_srbp(grades, lists, k, p, b, grade_max):
    # P(examine query 1 rank 1) = 1; from (q, r): down to
    # (q, r + 1) with p b, on to (q + 1, 1) with p (1 - b).
    examine = {}
    first = 1.0
    total = 0.0
    for q, ranked in enumerate(lists):
        here = first
        for r in range(k):
            examine[q, r] = here
            if r < len(ranked):
                total += here * max(grades.get(ranked[r], 0), 0) / grade_max
            here *= p * b
        # reaching the next query: from any rank r of this one (the list goes on without end, empty past its
        # results), so the sum over r of (p b)^r p (1 - b)
        first = first * p * (1 - b) / (1 - p * b)
    return (1 - p) * total


def ref_timed(grades, lists, trail, params):
    """Write the trail out as events (time, kind, doc), then score them."""
    events = _ref_events(grades, lists, trail, params)
    tbg, credited = 0.0, set()
    for time, kind, doc in events:
        if kind == "reach" and grades.get(doc, 0) > 0 and doc not in credited:
            credited.add(doc)
            tbg += 0.64 * 0.77 * 2 ** (-time / params.half_life)
    return {"tbg": tbg, "u_measure": _ref_u(grades, lists, trail, params)}


def _ref_events(grades, lists, trail, params):
    """The trail as events (time, kind, doc) on T-BG's clock."""
    events, clock = [], 0.0
    for q, ranked in enumerate(lists):
        seen = trail[q] if trail else TrailQuery()
        if seen.start is not None:
            clock = seen.start
        depth = params.k if seen.depth is None else seen.depth
        for r, doc in enumerate(ranked[:depth], start=1):
            relevant = grades.get(doc, 0) > 0
            events.append((clock, "reach", doc))
            clock += params.summary_seconds
            if seen.opened is None:
                events.append(
                    (clock + params.document_seconds, "read", doc) if relevant else (clock, "skip", doc)
                )
                clock += (0.64 if relevant else 0.39) * params.document_seconds
            elif r in seen.opened:
                dwell = seen.opened[r] if seen.opened[r] is not None else params.document_seconds
                clock += dwell
                events.append((clock, "read", doc))
    return events


def _ref_u(grades, lists, trail, params):
    """U's clock adds a whole reading per read document and nothing for unread ones: rebuilt on its own."""
    u_clock, u, credited = 0.0, 0.0, set()
    for q, ranked in enumerate(lists):
        seen = trail[q] if trail else TrailQuery()
        if seen.start is not None:
            u_clock = seen.start
        for r, doc in enumerate(ranked[: params.k if seen.depth is None else seen.depth], start=1):
            u_clock += params.summary_seconds
            read = grades.get(doc, 0) > 0 if seen.opened is None else r in seen.opened
            if read:
                dwell = None if seen.opened is None else seen.opened[r]
                u_clock += params.document_seconds if dwell is None else dwell
                if grades.get(doc, 0) > 0 and doc not in credited:
                    credited.add(doc)
                    u += grades[doc] * max(0.0, 1 - u_clock / params.u_patience)
    return u


# --- the comparisons ----------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(sessions(), st.integers(1, 6), st.sampled_from([1.5, 2.0, 10.0]), st.sampled_from([2.0, 4.0, 10.0]))
def test_the_kanoulas_forms_and_aggregates_equal_the_reference_to_1e_9(session, k, b, bq):
    grades, lists = session
    values = score_measures(
        batch_of(grades, lists, k),
        ["sdcg_per_query", "nsdcg", "ndcg_mean", "ndcg_max", "ndcg_first", "ndcg_last"],
        MeasureParams(k=k, b=b, bq=bq),
    )
    expected = ref_kanoulas(grades, lists, k, b, bq)  # each query's nDCG@k at log2(r + 1) whatever b
    for name, value in expected.items():
        assert values[name][0] == pytest.approx(value, abs=1e-9), name


@settings(max_examples=150, deadline=None)
@given(sessions(max_queries=3, max_len=4), st.integers(1, 4), st.floats(0, 1), st.floats(0, 1))
def test_the_exact_esndcg_is_the_sum_over_every_path(session, k, p_ref, p_down):
    grades, lists = session
    value = score_measures(
        batch_of(grades, lists, k), ["esndcg"], MeasureParams(k=k, p_reformulate=p_ref, p_down=p_down)
    )["esndcg"][0]
    assert value == pytest.approx(ref_esndcg(grades, lists, k, p_ref, p_down), abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_the_exact_esndcg_lies_in_the_95_percent_interval_of_10000_paths(seed):
    rng = np.random.default_rng(100 + seed)
    grades = {f"d{i}": int(rng.integers(0, 4)) for i in range(20)}
    lists = [
        [f"d{i}" for i in rng.choice(25, size=int(rng.integers(3, 11)), replace=False)]
        for _ in range(int(rng.integers(2, 7)))
    ]
    batch = batch_of(grades, lists, 10)
    params = MeasureParams(k=10, mc_paths=10_000)
    exact = float(score_measures(batch, ["esndcg"], params)["esndcg"][0])
    mean, error = esndcg_monte_carlo(batch, 0, params, rng=np.random.default_rng(seed))
    assert abs(mean - exact) <= 1.96 * error, (mean, error, exact)


@settings(max_examples=150, deadline=None)
@given(sessions(), st.integers(1, 6), st.floats(0, 0.99), st.floats(0, 1))
def test_srbp_is_the_user_models_examination_probabilities_times_relevance(session, k, p, b):
    grades, lists = session
    value = score_measures(
        batch_of(grades, lists, k), ["srbp"], MeasureParams(k=k, srbp_p=p, srbp_b=b, grade_max=3)
    )["srbp"][0]
    assert value == pytest.approx(ref_srbp(grades, lists, k, p, b, 3), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(sessions(), st.integers(1, 6), st.data())
def test_tbg_and_u_are_the_sums_over_the_written_out_trail(session, k, data):
    grades, lists = session
    observed = data.draw(st.booleans())
    trail = None
    if observed:
        trail, start = [], 0.0
        for ranked in lists:
            start += data.draw(st.floats(0, 120))
            depth = data.draw(st.none() | st.integers(0, 6))
            ranks = range(1, min(len(ranked), k if depth is None else depth) + 1)
            opened = (
                None
                if data.draw(st.booleans())
                else {r: data.draw(st.none() | st.floats(0, 90)) for r in ranks if data.draw(st.booleans())}
            )
            trail.append(TrailQuery(start=data.draw(st.none() | st.just(start)), depth=depth, opened=opened))
    params = MeasureParams(k=k)
    depth = max([k] + [q.depth or 0 for q in trail or []])
    values = score_measures(
        batch_of(grades, lists, depth),
        ["tbg", "u_measure"],
        params,
        trails=None if trail is None else [trail],
    )
    expected = ref_timed(grades, lists, trail, params)
    assert values["tbg"][0] == pytest.approx(expected["tbg"], abs=1e-12)
    assert values["u_measure"][0] == pytest.approx(expected["u_measure"], abs=1e-12)
