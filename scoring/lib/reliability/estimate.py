"""One agreement coefficient with its precision: `AgreementEstimate`, and the t-based interval and p-value
that irrCAC reports with an analytic standard error.

With an analytic standard error se over n documents (Gwet 2014, "Handbook of Inter-Rater Reliability",
4th ed.; the irrCAC R package's formulas, no finite-population correction):
    interval  = estimate ± t_{(1 + level) / 2, n - 1} · se, the upper end capped at 1 (no coefficient
                exceeds 1);
    p-value   = 2 · (1 − T_{n − 1}(|estimate| / se)), two-sided, for "no agreement beyond chance" (0),
as in irrCAC's published examples (the "Weighted Chance-corrected Agreement Coefficients" vignette, 2019).
A standard error of 0 (every document rated alike) gives the interval (estimate, estimate) and p 0.
Undefined figures are NaN: an undefined coefficient, or fewer than two documents for an interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats

NAN = float("nan")


def chance_is_certain(pe: float) -> bool:
    """True when chance agreement leaves nothing to beat (p_e = 1: every grade the same), so the
    coefficient is undefined. Within 1e-12: summed in floating point, a certain p_e can come out
    0.9999999999999998, and (p_a − p_e) / (1 − p_e) would then be noise, not 0/0."""
    return pe >= 1.0 - 1e-12


@dataclass(frozen=True)
class AgreementEstimate:
    """A coefficient (e.g. "Gwet's AC2 (quadratic weights)") over n documents: its estimate, standard error,
    confidence interval (ci_low, ci_high) and p-value, and how they were obtained (`method`)."""

    coefficient: str
    estimate: float
    se: float
    ci_low: float
    ci_high: float
    p_value: float
    method: str
    n: int


def undefined(coefficient: str, method: str, n: int, estimate: float = NAN) -> AgreementEstimate:
    return AgreementEstimate(coefficient, float(estimate), NAN, NAN, NAN, NAN, method, int(n))


NOISE = 1e-12


def t_estimate(
    coefficient: str, estimate: float, variance: float, *, n: int, df: int, level: float, method: str
) -> AgreementEstimate:
    """The estimate with se = sqrt(variance), its t interval and two-sided p-value on `df` degrees of
    freedom (irrCAC: n − 1 documents)."""
    check_level(level)
    if math.isnan(estimate) or df < 1 or math.isnan(variance):
        return undefined(coefficient, method, n, estimate)
    # Floating-point noise around a true zero (a table whose weighted kappa is exactly 0 gave se 4e-8 one way
    # round and 0 transposed, and p-values of 0.44 and 0.53): snapped to the zero it is. A real coefficient or
    # variance is never this small (se >= 1e-6 needs ~10^12 documents).
    if abs(estimate) < NOISE:
        estimate = 0.0
    if variance < NOISE:
        variance = 0.0
    se = math.sqrt(max(variance, 0.0))
    if se == 0.0:
        # irrCAC floors the variance at 1e-100: the interval is the point, the p-value 0 (1 at exactly 0).
        p_value = 0.0 if estimate != 0 else 1.0
        return AgreementEstimate(coefficient, estimate, 0.0, estimate, min(1.0, estimate), p_value, method, n)
    quantile = float(stats.t.ppf((1.0 + level) / 2.0, df))
    p_value = float(2.0 * stats.t.sf(abs(estimate) / se, df))
    return AgreementEstimate(
        coefficient,
        float(estimate),
        se,
        float(estimate - quantile * se),
        float(min(1.0, estimate + quantile * se)),
        p_value,
        method,
        int(n),
    )


def check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"the confidence level must be between 0 and 1, not {level!r}")
