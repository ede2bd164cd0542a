"""The prevalence paradox (pure, no database): two tables with the same 85% agreement, Feinstein & Cicchetti
(1990), "High agreement but low kappa: I. The problems of two paradoxes", J Clin Epidemiol 43(6): 543-549,
their tables with p_o = 0.85: balanced [[40, 9], [6, 45]], kappa 0.70; skewed [[80, 10], [5, 5]], kappa 0.32.
Gwet (2008, BJMSP 61: 29-48) proposed AC1 because it does not collapse there; an IR pool, where nearly every
document is non-relevant, is the skewed case."""

import numpy as np
import pytest

from scoring.lib import reliability

BALANCED = np.array([[40, 9], [6, 45]])
SKEWED = np.array([[80, 10], [5, 5]])


def test_kappa_collapses_on_the_skewed_table_with_the_same_agreement():
    assert reliability.percent_agreement_estimate(BALANCED).estimate == pytest.approx(0.85)
    assert reliability.percent_agreement_estimate(SKEWED).estimate == pytest.approx(0.85)
    assert reliability.cohen_kappa_estimate(BALANCED).estimate == pytest.approx(0.70, abs=0.005)
    assert reliability.cohen_kappa_estimate(SKEWED).estimate == pytest.approx(0.32, abs=0.005)


def test_ac1_stays_high_on_the_skewed_table():
    # By hand: pi = (0.875, 0.125), p_e = 2 * 0.875 * 0.125 = 0.21875, AC1 = (0.85 - 0.21875) / 0.78125.
    skewed = reliability.gwet_ac_estimate(SKEWED)
    assert skewed.estimate == pytest.approx((0.85 - 0.21875) / 0.78125)
    balanced = reliability.gwet_ac_estimate(BALANCED)
    assert balanced.estimate == pytest.approx(0.70, abs=0.005)
    assert skewed.estimate > balanced.estimate > reliability.cohen_kappa_estimate(SKEWED).estimate


def test_on_a_pool_of_mostly_non_relevant_documents_ac1_is_near_the_agreement_and_kappa_is_not():
    # 200 documents, 95% judged non-relevant by both; the two assessors disagree on 8 and agree on 2 relevant.
    pool = np.array([[190, 4], [4, 2]])
    percent = reliability.percent_agreement_estimate(pool).estimate
    kappa = reliability.cohen_kappa_estimate(pool)
    ac1 = reliability.gwet_ac_estimate(pool)
    assert percent == pytest.approx(0.96)
    assert kappa.estimate < 0.35 < 0.9 < ac1.estimate
    # and the interval says how sure: kappa's is wide, AC1's narrow.
    assert kappa.ci_high - kappa.ci_low > 3 * (ac1.ci_high - ac1.ci_low)
