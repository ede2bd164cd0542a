"""Any number of graders, some of whom did not grade every document: graders x units data with NaN where a
grader gave no grade (the layout of scoring/lib/agreement.krippendorff_alpha). Documents nobody graded are
left out; n is the number of documents left (at least one grade), q the number of categories.

From r_ik (how many graders put document i in category k), r_i = Σ_k r_ik, r*_ik = Σ_l w_kl r_il and the
documents with r_i >= 2 (n₂ of them):
    p_a = (1 / n₂) Σ_{i: r_i >= 2} Σ_k r_ik (r*_ik − 1) / (r_i (r_i − 1)),  π_k = (1 / n) Σ_i r_ik / r_i.
- Fleiss' kappa (Fleiss 1971; weighted, Gwet 2014 ch. 2): p_e = Σ w_kl π_k π_l.
- Gwet's AC1 / AC2 (Gwet 2008; 2014): p_e = T_w Σ_k π_k (1 − π_k) / (q (q − 1)), T_w = Σ w_kl.
- Brennan-Prediger (Brennan & Prediger 1981; Gwet 2014 ch. 2): p_e = T_w / q².
- percent agreement: p_a itself (p_e = 0; irrCAC's pa.coeff.raw).
- Krippendorff's alpha in Gwet's form (Gwet 2014, ch. 2; equal to Krippendorff's nominal alpha with
  unweighted w and to his interval alpha with quadratic weights on the grades' values), over the n₂
  documents with two or more grades: r̄ = mean r_i, ε = 1 / Σ r_i,
  p'_a = (1 / n₂) Σ_i Σ_k r_ik (r*_ik − 1) / (r̄ (r_i − 1)), p_a = (1 − ε) p'_a + ε,
  π_k = (1 / n₂) Σ_i r_ik / r̄, p_e = Σ w_kl π_k π_l.
Each is (p_a − p_e) / (1 − p_e).

Variances: the linearisation of Gwet (2014, ch. 5) as irrCAC's gwet.ac1.raw, fleiss.kappa.raw and
krippen.alpha.raw compute it (no finite-population correction): each document's share κ*_i, and
v = Σ_i (κ*_i − κ)² / (n (n − 1)) (alpha: over its n₂ documents, around α' = (p'_a − p_e) / (1 − p_e)).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .estimate import AgreementEstimate, chance_is_certain, t_estimate, undefined
from .weights import agreement_weights, weighted_name

ANALYTIC = "analytic variance (Gwet 2014), t interval on n − 1 df"


def category_counts(data, categories: Sequence | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(categories, r): the sorted categories and the documents x categories counts r_ik of graders x units
    `data`, documents that nobody graded left out. A grade outside `categories` is refused."""
    data = np.asarray(data, dtype=float)
    if data.ndim != 2:
        raise ValueError("ratings must be a graders x documents matrix (NaN where a grader gave no grade)")
    present = ~np.isnan(data)
    values = np.unique(data[present]) if categories is None else np.asarray(sorted(categories), dtype=float)
    if not values.size:  # nothing graded and no categories given
        return values, np.zeros((0, 0))
    unknown = present & ~np.isin(data, values)
    if unknown.any():
        raise ValueError(
            f"grade {data[unknown][0]:g} is not one of the categories {[float(v) for v in values]}"
        )
    counts = np.stack([(data == value).sum(axis=0) for value in values], axis=1).astype(float)
    return values, counts[counts.sum(axis=1) > 0] if counts.size else counts.reshape(0, values.size)


def _agreement_parts(counts: np.ndarray, w: np.ndarray):
    per_doc = counts.sum(axis=1)
    weighted = counts @ w.T  # r*_ik = Σ_l w_kl r_il
    agree = (counts * (weighted - 1.0)).sum(axis=1)
    return per_doc, agree


def _fleiss_like(data, categories, weighting, level, name, chance) -> AgreementEstimate:
    """Fleiss' kappa and Gwet's AC1/AC2 share everything but the chance agreement `chance(pi, w)` and its
    per-document share."""
    values, counts = category_counts(data, categories)
    n, q = counts.shape
    w = agreement_weights(q, weighting)
    per_doc, agree = _agreement_parts(counts, w) if n else (np.zeros(0), np.zeros(0))
    pairable = per_doc >= 2
    n2 = int(pairable.sum())
    if n2 == 0 or q < 2:
        return undefined(name, ANALYTIC, n)
    denominator = np.where(pairable, per_doc * (per_doc - 1.0), 1.0)
    pa_i = np.where(pairable, agree / denominator, 0.0)
    pa = float(pa_i[pairable].sum() / n2)
    pi = (counts / per_doc[:, None]).sum(axis=0) / n
    pe, pe_i = chance(pi, w, counts, per_doc)
    if chance_is_certain(pe):
        return undefined(name, ANALYTIC, n)
    coefficient = (pa - pe) / (1.0 - pe)
    share = (n / n2) * (pa_i - pe * pairable) / (1.0 - pe)
    share_x = share - 2.0 * (1.0 - coefficient) * (pe_i - pe) / (1.0 - pe)
    variance = ((share_x - coefficient) ** 2).sum() / (n * (n - 1)) if n > 1 else float("nan")
    return t_estimate(name, coefficient, variance, n=n, df=n - 1, level=level, method=ANALYTIC)


def _fleiss_chance(pi, w, counts, per_doc):
    symmetric = (w @ pi + w.T @ pi) / 2.0
    return float((w * np.outer(pi, pi)).sum()), (counts @ symmetric) / per_doc


def _uniform_chance(pi, w, counts, per_doc):
    pe = float(w.sum() / w.shape[0] ** 2)
    return pe, np.full(counts.shape[0], pe)


def _no_chance(pi, w, counts, per_doc):
    return 0.0, np.zeros(counts.shape[0])


def _gwet_chance(pi, w, counts, per_doc):
    q = w.shape[0]
    scale = w.sum() / (q * (q - 1))
    return float(scale * (pi * (1.0 - pi)).sum()), scale * (counts @ (1.0 - pi)) / per_doc


def fleiss_kappa_estimate(
    data, categories: Sequence | None = None, weighting: str = "unweighted", *, level: float = 0.95
) -> AgreementEstimate:
    """Fleiss' (generalised, optionally weighted) kappa of any number of graders, with missing grades."""
    name = weighted_name("Fleiss' kappa", weighting)
    return _fleiss_like(data, categories, weighting, level, name, _fleiss_chance)


def gwet_ac_many_estimate(
    data, categories: Sequence | None = None, weighting: str = "unweighted", *, level: float = 0.95
) -> AgreementEstimate:
    """Gwet's AC1 (unweighted) or AC2 (weighted) of any number of graders, with missing grades."""
    name = weighted_name("Gwet's AC1" if weighting == "unweighted" else "Gwet's AC2", weighting)
    return _fleiss_like(data, categories, weighting, level, name, _gwet_chance)


def brennan_prediger_many_estimate(
    data, categories: Sequence | None = None, weighting: str = "unweighted", *, level: float = 0.95
) -> AgreementEstimate:
    """Brennan and Prediger's (weighted) coefficient of any number of graders, with missing grades."""
    name = weighted_name("Brennan-Prediger", weighting)
    return _fleiss_like(data, categories, weighting, level, name, _uniform_chance)


def percent_agreement_many_estimate(
    data, categories: Sequence | None = None, weighting: str = "unweighted", *, level: float = 0.95
) -> AgreementEstimate:
    """The (weighted) share of agreeing pairs of grades per document, averaged over the documents with two
    grades or more, of any number of graders."""
    name = weighted_name("Percent agreement", weighting)
    return _fleiss_like(data, categories, weighting, level, name, _no_chance)


KRIPPENDORFF_WEIGHTING = {"nominal": "unweighted", "interval": "quadratic"}


def krippendorff_alpha_analytic(
    data, level_of_measurement: str = "interval", values: Sequence | None = None, *, level: float = 0.95
) -> AgreementEstimate:
    """Krippendorff's alpha (nominal or interval) with Gwet's analytic variance. The ordinal alpha has no
    such formula: krippendorff_alpha_bootstrap gives its interval."""
    if level_of_measurement not in KRIPPENDORFF_WEIGHTING:
        raise ValueError(
            f"the analytic variance covers the nominal and interval alpha, not {level_of_measurement!r}; "
            "use the bootstrap"
        )
    name = f"Krippendorff's alpha ({level_of_measurement})"
    domain, counts = category_counts(data, values)
    counts = counts[counts.sum(axis=1) >= 2]
    n, q = counts.shape
    if n < 1 or q < 2:
        return undefined(name, ANALYTIC, n)
    w = agreement_weights(domain, KRIPPENDORFF_WEIGHTING[level_of_measurement])
    per_doc, agree = _agreement_parts(counts, w)
    mean_raters = per_doc.mean()
    epsilon = 1.0 / per_doc.sum()
    pa_prime = float((agree / (mean_raters * (per_doc - 1.0))).sum() / n)
    pa = (1.0 - epsilon) * pa_prime + epsilon
    pi = (counts / mean_raters).sum(axis=0) / n
    pe = float((w * np.outer(pi, pi)).sum())
    if chance_is_certain(pe):
        return undefined(name, ANALYTIC, n)
    alpha = (pa - pe) / (1.0 - pe)
    alpha_prime = (pa_prime - pe) / (1.0 - pe)
    # irrCAC centres each document on p_a here (its published values; the 2021 R source uses p'_a).
    pa_i = agree / (mean_raters * (per_doc - 1.0)) - pa * (per_doc - mean_raters) / mean_raters
    share = (pa_i - pe) / (1.0 - pe)
    symmetric = (w @ pi + w.T @ pi) / 2.0
    pe_i = (counts @ symmetric) / mean_raters - pe * (per_doc - mean_raters) / mean_raters
    share_x = share - 2.0 * (1.0 - alpha_prime) * (pe_i - pe) / (1.0 - pe)
    variance = ((share_x - alpha_prime) ** 2).sum() / (n * (n - 1)) if n > 1 else float("nan")
    return t_estimate(name, alpha, variance, n=n, df=n - 1, level=level, method=ANALYTIC)
