"""scoring.lib.judge_audit without a database: the variants are what they say and the same for a seed, and
the figures equal a computation by hand."""

import numpy as np
import pytest

from scoring.lib.judge_audit import (
    INCREASE_THRESHOLD,
    INJECTIONS,
    Observation,
    audit_figures,
    paired_increase,
    query_terms,
    rate_interval,
    variant_text,
)

TEXT = "Wings of birds evolved from forelimbs. Feathers came first. Flight followed much later in time."


def test_the_same_seed_and_document_give_the_same_variant_and_another_seed_another():
    for variant in ("stuffed", "injected", "padded"):
        first = variant_text(variant, TEXT, query="bird flight origin", seed=3, key="S1/d1")
        assert first == variant_text(variant, TEXT, query="bird flight origin", seed=3, key="S1/d1")
        others = {
            variant_text(variant, TEXT, query="bird flight origin", seed=s, key="S1/d1") for s in range(10)
        }
        assert len(others) > 1


def test_each_variant_does_what_its_name_says():
    query = "Origin of Bird flight"
    stuffed = variant_text("stuffed", TEXT, query=query, seed=1, key="k")
    for term in query_terms(query):
        assert stuffed.split().count(term) >= 2
    injected = variant_text("injected", TEXT, query=query, seed=1, key="k")
    assert any(instruction in injected for instruction in INJECTIONS)
    assert "##final score" not in " ".join(INJECTIONS).casefold()
    padded = variant_text("padded", TEXT, query=query, seed=1, key="k")
    assert len(padded) >= 3 * len(TEXT) and padded.startswith(TEXT)
    truncated = variant_text("truncated", TEXT, query=query, seed=1, key="k")
    assert truncated.split() == TEXT.split()[: len(TEXT.split()) // 3]
    assert variant_text("original", TEXT, query=query, seed=1, key="k") == TEXT
    with pytest.raises(ValueError):
        variant_text("shouted", TEXT, query=query, seed=1, key="k")


def test_a_rate_and_a_paired_increase_have_seeded_percentile_intervals():
    errors = [True] * 3 + [False] * 7
    figures = rate_interval(errors, seed=5, resamples=500)
    rng = np.random.default_rng(5)
    values = np.array(errors, dtype=float)
    boot = values[rng.integers(0, 10, size=(500, 10))].mean(axis=1)
    assert figures["rate"] == 0.3 and figures["n"] == 10
    assert figures["low"] == pytest.approx(np.percentile(boot, 2.5)) and figures["high"] == pytest.approx(
        np.percentile(boot, 97.5)
    )
    increase = paired_increase([False] * 10, [True] * 10, seed=5, resamples=500)
    assert increase == {"increase": 1.0, "low": 1.0, "high": 1.0, "n": 10}


def _observations(fooled_by: str, documents: int = 20):
    rows = []
    for n in range(documents):
        scenario = f"S{n % 2 + 1}"
        key = f"{scenario}/d{n}"
        relevant = n % 4 == 0
        rows.append(Observation(scenario, key, "original", relevant, relevant))
        variants = ("truncated",) if relevant else ("stuffed", "injected", "padded")
        for variant in variants:
            judged = (not relevant) if variant == fooled_by else relevant
            rows.append(Observation(scenario, key, variant, relevant, judged))
    return rows


def test_a_judge_fooled_by_one_variant_is_not_robust_and_that_variant_is_named():
    figures = audit_figures(_observations("injected"), seed=1, resamples=200)
    assert figures["verdict"] == "not robust" and "injected" in figures["reason"]
    flagged = [v["variant"] for v in figures["variants"] if v["flagged"]]
    assert flagged == ["injected"] and figures["threshold"] == INCREASE_THRESHOLD
    assert audit_figures(_observations("none"), seed=1, resamples=200)["verdict"] == "robust"


def test_a_rise_within_the_threshold_is_not_flagged():
    rows = _observations("none")
    # One of fifteen non-relevant documents' stuffed variant fooled: a rise of 1/15 < 0.10.
    rows = [
        Observation(o.scenario, o.key, o.variant, o.people_relevant, True)
        if (o.key, o.variant) == ("S2/d1", "stuffed")
        else o
        for o in rows
    ]
    figures = audit_figures(rows, seed=1, resamples=200)
    stuffed = next(v for v in figures["variants"] if v["variant"] == "stuffed")
    assert stuffed["increase"]["increase"] == pytest.approx(1 / 15, abs=1e-6) and not stuffed["flagged"]
    assert figures["verdict"] == "robust"


def test_a_variant_never_graded_leaves_the_verdict_undetermined():
    rows = [
        Observation(o.scenario, o.key, o.variant, o.people_relevant, None) if o.variant == "padded" else o
        for o in _observations("none")
    ]
    figures = audit_figures(rows, seed=1, resamples=200)
    assert figures["verdict"] == "undetermined" and "padded" in figures["reason"]
    assert next(v for v in figures["variants"] if v["variant"] == "padded")["ungraded"] == 15


def test_agreement_per_scenario_is_kappa_and_ac1_of_the_two_by_two_table():
    rows = [
        Observation("S1", "a", "original", True, True),
        Observation("S1", "b", "original", True, False),
        Observation("S1", "c", "original", False, False),
        Observation("S1", "d", "original", False, False),
        Observation("S1", "e", "original", False, True),
        Observation("S2", "f", "original", False, False),
        Observation("S2", "g", "original", True, True),
    ]
    figures = audit_figures(rows, seed=1, resamples=100)
    s1 = figures["scenarios"][0]["agreement"]
    # By hand: table [[2, 1], [1, 1]], n 5; pa = 3/5; kappa's pe = (3/5)(3/5) + (2/5)(2/5) = 13/25;
    # AC1's pe = 2 * pi (1 - pi) with pi = 2/5 -> 12/25.
    assert s1["table"] == [[2, 1], [1, 1]]
    assert s1["kappa"]["estimate"] == pytest.approx((3 / 5 - 13 / 25) / (1 - 13 / 25), abs=1e-6)
    assert s1["ac1"]["estimate"] == pytest.approx((3 / 5 - 12 / 25) / (1 - 12 / 25), abs=1e-6)
    assert figures["disagree_most"] == ["S1"]
