"""The prevalence paradox on random pools, checked with the oracle (pure, no database): two assessors who
keep a document's grade 95% of the time, on pools where 95% of documents are non-relevant (grade 0), agree on
most documents; Cohen's kappa and Scott's pi fall far below that agreement while Gwet's AC1 and
Brennan-Prediger stay near it, in our figures and in the irrCAC port's, equal to 1e-9 with their intervals."""

import numpy as np
import pandas as pd
from irrCAC.table import CAC as TableCAC

from scoring.lib import agreement, reliability

from .test_agreement_coefficients_match_the_irrcac_port_on_random_data import assert_same, defined


def pool(rng, documents: int, prevalence: float) -> np.ndarray:
    truth = np.where(rng.random(documents) < prevalence, 0, rng.integers(1, 4, documents))
    keep = rng.random((2, documents)) < 0.95
    return np.where(keep, truth, rng.integers(0, 4, (2, documents)))


def test_kappa_collapses_where_ac1_does_not_in_ours_and_the_oracles_figures():
    rng = np.random.default_rng(95)
    figures = {"percent": [], "kappa": [], "scott": [], "ac1": [], "bp": []}
    for _ in range(40):
        grades = pool(rng, 200, 0.95)
        matrix = agreement.confusion_matrix(grades[0], grades[1], [0, 1, 2, 3])
        if not defined(matrix):
            continue
        with np.errstate(all="ignore"):
            port = TableCAC(pd.DataFrame(matrix), weights="identity", digits=20)
            theirs = {"kappa": port.cohen(), "scott": port.scott(), "ac1": port.gwet(), "bp": port.bp()}
        ours = {
            "kappa": reliability.cohen_kappa_estimate(matrix),
            "scott": reliability.scott_pi_estimate(matrix),
            "ac1": reliability.gwet_ac_estimate(matrix),
            "bp": reliability.brennan_prediger_estimate(matrix),
        }
        for name, estimate in ours.items():
            assert_same(estimate, theirs[name]["est"], p_value=estimate.estimate > 0)
            figures[name].append(estimate.estimate)
        figures["percent"].append(reliability.percent_agreement_estimate(matrix).estimate)
    means = {name: float(np.mean(values)) for name, values in figures.items()}
    assert len(figures["kappa"]) >= 30
    assert means["percent"] > 0.9
    # about 0.93 agreement, AC1 0.92, Brennan-Prediger 0.90, kappa and pi 0.51
    assert means["ac1"] > 0.9 and means["bp"] > 0.85
    assert means["kappa"] < 0.6 and means["scott"] < 0.6
    assert means["ac1"] - means["kappa"] > 0.3
