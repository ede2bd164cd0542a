"""Two graders on the same documents, from their q x q contingency table O (rows: the first grader's grades,
n = Σ O documents), with agreement weights w (weights.py): p_kl = O_kl / n, row and column proportions p_k+,
p_+l, π_k = (p_k+ + p_+k) / 2, weighted agreement p_a = Σ w_kl p_kl, and a coefficient (p_a − p_e) / (1 − p_e)
whose chance agreement p_e is:

- Cohen's kappa (Cohen 1960; weighted, Cohen 1968): p_e = Σ w_kl p_k+ p_+l.
- Gwet's AC1 / AC2 (Gwet 2008, BJMSP 61: 29-48; AC2 with weights, Gwet 2014 ch. 3):
  p_e = T_w Σ_k π_k (1 − π_k) / (q (q − 1)), T_w = Σ w_kl. Unlike kappa's, this chance agreement falls as
  prevalence grows, so AC1 stays near p_a when nearly every document is non-relevant (the prevalence paradox).
- Scott's pi (Scott 1955; weighted, Gwet 2014 ch. 3): p_e = Σ w_kl π_k π_l.
- Brennan-Prediger (Brennan & Prediger 1981; weighted, Gwet 2014 ch. 3): p_e = T_w / q², chance taken as
  a uniform choice among the q grades.
- percent agreement: p_a itself (p_e = 0).

Variances (Gwet 2014, ch. 5; irrCAC's kappa2.table, gwet.ac1.table, pa2.table; no finite-population
correction):
- kappa: [Σ p_kl (w_kl − (1 − κ)(w̄_+k + w̄_l+))² − (p_a − 2 (1 − κ) p_e)²] / (n (1 − p_e)²),
  w̄_+k = Σ_l w_kl p_+l, w̄_l+ = Σ_k w_kl p_k+;
- AC: [Σ p_kl (w_kl − 2 (1 − AC) T_w (1 − (π_k + π_l) / 2) / (q (q − 1)))² − (p_a − 2 (1 − AC) p_e)²]
  / (n (1 − p_e)²);
- Scott's pi: [Σ p_kl (w_kl − (1 − π)(π̄_k + π̄_l))² − (p_a − 2 (1 − π) p_e)²] / (n (1 − p_e)²),
  π̄_k = Σ_l w_kl π_l (irrCAC's scott2.table);
- Brennan-Prediger: (Σ p_kl w_kl² − p_a²) / (n (1 − p_e)²) (bp2.table);
- percent agreement: (Σ p_kl w_kl² − p_a²) / n.
"""

from __future__ import annotations

import numpy as np

from .estimate import AgreementEstimate, chance_is_certain, t_estimate, undefined
from .weights import agreement_weights, weighted_name

ANALYTIC = "analytic variance (Gwet 2014), t interval on n − 1 df"


def _table(matrix, weighting: str):
    table = np.asarray(matrix, dtype=float)
    if table.ndim != 2 or table.shape[0] != table.shape[1]:
        raise ValueError("a contingency table must be square: q x q counts, rows the first grader's grades")
    if (table < 0).any():
        raise ValueError("a contingency table holds counts, not negative numbers")
    n = table.sum()
    weights = agreement_weights(table.shape[0], weighting)
    proportions = table / n if n else table
    return table, int(round(n)), weights, proportions


def cohen_kappa_estimate(matrix, weighting: str = "unweighted", *, level: float = 0.95) -> AgreementEstimate:
    """Cohen's (weighted) kappa with its analytic standard error, interval and p-value."""
    _table_, n, w, p = _table(matrix, weighting)
    name = weighted_name("Cohen's kappa", weighting)
    if n == 0:
        return undefined(name, ANALYTIC, 0)
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    pa = float((w * p).sum())
    pe = float((w * np.outer(rows, cols)).sum())
    if chance_is_certain(pe):
        return undefined(name, ANALYTIC, n)
    kappa = (pa - pe) / (1.0 - pe)
    w_col = w @ cols  # w̄_+k
    w_row = w.T @ rows  # w̄_l+
    spread = (p * (w - (1.0 - kappa) * (w_col[:, None] + w_row[None, :])) ** 2).sum()
    variance = (spread - (pa - 2.0 * (1.0 - kappa) * pe) ** 2) / (n * (1.0 - pe) ** 2)
    return t_estimate(name, kappa, variance, n=n, df=n - 1, level=level, method=ANALYTIC)


def gwet_ac_estimate(matrix, weighting: str = "unweighted", *, level: float = 0.95) -> AgreementEstimate:
    """Gwet's AC1 (unweighted) or AC2 (weighted) with its analytic standard error, interval and p-value."""
    _table_, n, w, p = _table(matrix, weighting)
    q = w.shape[0]
    name = weighted_name("Gwet's AC1" if weighting == "unweighted" else "Gwet's AC2", weighting)
    if n == 0 or q < 2:
        return undefined(name, ANALYTIC, n)
    pi = (p.sum(axis=1) + p.sum(axis=0)) / 2.0
    total = w.sum()
    pa = float((w * p).sum())
    pe = float(total * (pi * (1.0 - pi)).sum() / (q * (q - 1)))
    ac = (pa - pe) / (1.0 - pe)
    term = w - 2.0 * (1.0 - ac) * total * (1.0 - (pi[:, None] + pi[None, :]) / 2.0) / (q * (q - 1))
    variance = ((p * term**2).sum() - (pa - 2.0 * (1.0 - ac) * pe) ** 2) / (n * (1.0 - pe) ** 2)
    return t_estimate(name, ac, variance, n=n, df=n - 1, level=level, method=ANALYTIC)


def percent_agreement_estimate(
    matrix, weighting: str = "unweighted", *, level: float = 0.95
) -> AgreementEstimate:
    """The (weighted) share of documents the two graders agree on, with its standard error and interval."""
    _table_, n, w, p = _table(matrix, weighting)
    name = weighted_name("Percent agreement", weighting)
    if n == 0:
        return undefined(name, ANALYTIC, 0)
    pa = float((w * p).sum())
    variance = ((p * w**2).sum() - pa**2) / n
    return t_estimate(name, pa, variance, n=n, df=n - 1, level=level, method=ANALYTIC)


def scott_pi_estimate(matrix, weighting: str = "unweighted", *, level: float = 0.95) -> AgreementEstimate:
    """Scott's (weighted) pi with its analytic standard error, interval and p-value."""
    _table_, n, w, p = _table(matrix, weighting)
    name = weighted_name("Scott's pi", weighting)
    if n == 0:
        return undefined(name, ANALYTIC, 0)
    pi = (p.sum(axis=1) + p.sum(axis=0)) / 2.0
    pa = float((w * p).sum())
    pe = float((w * np.outer(pi, pi)).sum())
    if chance_is_certain(pe):
        return undefined(name, ANALYTIC, n)
    scott = (pa - pe) / (1.0 - pe)
    w_pi = (w @ pi + w.T @ pi) / 2.0  # π̄_k
    spread = (p * (w - (1.0 - scott) * (w_pi[:, None] + w_pi[None, :])) ** 2).sum()
    variance = (spread - (pa - 2.0 * (1.0 - scott) * pe) ** 2) / (n * (1.0 - pe) ** 2)
    return t_estimate(name, scott, variance, n=n, df=n - 1, level=level, method=ANALYTIC)


def brennan_prediger_estimate(
    matrix, weighting: str = "unweighted", *, level: float = 0.95
) -> AgreementEstimate:
    """Brennan and Prediger's (weighted) coefficient with its analytic se, interval and p-value."""
    _table_, n, w, p = _table(matrix, weighting)
    q = w.shape[0]
    name = weighted_name("Brennan-Prediger", weighting)
    if n == 0 or q < 2:
        return undefined(name, ANALYTIC, n)
    pa = float((w * p).sum())
    pe = float(w.sum() / q**2)
    coefficient = (pa - pe) / (1.0 - pe)
    variance = ((p * w**2).sum() - pa**2) / (n * (1.0 - pe) ** 2)
    return t_estimate(name, coefficient, variance, n=n, df=n - 1, level=level, method=ANALYTIC)
