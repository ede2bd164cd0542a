"""The linear mixed model with crossed random intercepts for participant and scenario (statsmodels MixedLM),
fitted on the sessions themselves, which is what a within-subject Latin-square design calls for:

    value[s] = mu + beta[system(s)] + u[participant(s)] + v[scenario(s)] + e[s]
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import stats

from .multiplicity import benjamini_hochberg, holm

MIXED_FORMULA = "value ~ C(system)"
MIXED_VARIANCE_COMPONENTS = {"participant": "0 + C(participant)", "scenario": "0 + C(scenario)"}
# statsmodels fits crossed effects as variance components of one group, with dense design matrices: its cost
# grows steeply with the design (on a shared 2-core machine, one BLAS thread: 1.2 s for 800 sessions of 200
# participants, 106 s for 2,000 of 500). Above this many sessions the page says so instead of blocking a
# request.
MIXED_MAX_SESSIONS = 800
MIXED_WORDS = "value ~ system + (1 | participant) + (1 | scenario)"  # lme4's notation, for the pages
# The optimizers tried in turn until one converges: statsmodels' own default order (BFGS, then L-BFGS, then
# conjugate gradients), then Powell's derivative-free method. Each is asked for alone so that the page can say
# which one the estimates come from.
MIXED_OPTIMIZERS = ("bfgs", "lbfgs", "cg", "powell")
OPTIMIZER_WORDS = {
    "bfgs": "BFGS",
    "lbfgs": "L-BFGS",
    "cg": "conjugate gradients",
    "powell": "Powell's method",
}
# statsmodels' iteration limit for each optimizer (its own default); a test lowers it to drive a fit that
# never converges.
MIXED_MAXITER = 100
# A variance component below this share of the residual variance is read as "about zero" (at the boundary,
# where the likelihood is flat and the first optimizer often stops early).
BOUNDARY_SHARE = 0.01


@dataclass(frozen=True)
class MixedEffect:
    first: str  # the reference system
    second: str
    estimate: float  # second minus first, the other effects held
    se: float
    low: float
    high: float
    z: float
    p_value: float
    p_holm: float | None = None
    p_bh: float | None = None


@dataclass
class MixedModel:
    formula: str
    reference: str
    n_sessions: int
    n_participants: int
    n_scenarios: int
    effects: list[MixedEffect] = field(default_factory=list)
    variances: dict[str, float] = field(default_factory=dict)  # participant, scenario, residual
    converged: bool = False
    fitted: bool = False
    optimizer: str = ""  # the one of MIXED_OPTIMIZERS the estimates come from
    notes: list[str] = field(default_factory=list)


def mixed_model(
    values, systems, participants, scenarios, *, level: float = 0.95, max_sessions: int = MIXED_MAX_SESSIONS
) -> MixedModel:
    """The system effect in a linear mixed model of the per-session values, with crossed random intercepts for
    the participant and the scenario:

        value[s] = mu + beta[system(s)] + u[participant(s)] + v[scenario(s)] + e[s],
        u ~ N(0, s2_participant), v ~ N(0, s2_scenario), e ~ N(0, s2_residual),

    fitted by REML with statsmodels as
        smf.mixedlm("value ~ C(system)", data, groups=<one group for all sessions>, re_formula="0",
                    vc_formula={"participant": "0 + C(participant)", "scenario": "0 + C(scenario)"})
    (crossed effects are variance components of a single group: statsmodels' documented way). The first system
    (in code order) is the reference; each other system's coefficient is its difference from it, with a Wald
    interval and p (normal reference, as statsmodels reports them)."""
    values = np.asarray(values, dtype=np.float64)
    labels = sorted(set(np.asarray(systems).tolist()), key=str)
    result = MixedModel(
        formula=MIXED_WORDS,
        reference=labels[0] if labels else "",
        n_sessions=len(values),
        n_participants=len(set(participants)),
        n_scenarios=len(set(scenarios)),
    )
    refusal = _why_not_fitted(result, len(labels), max_sessions)
    if refusal:
        result.notes.append(refusal)
        return result
    # Positional codes, not the labels: a code is the study's own text, never part of a formula.
    index = {label: i for i, label in enumerate(labels)}
    fit, tried = _fit(
        values, [f"s{index[s]:04d}" for s in np.asarray(systems).tolist()], participants, scenarios
    )
    if isinstance(fit, str):
        result.notes.append(fit)
        return result
    result.fitted = True
    result.converged = bool(fit.converged)
    result.optimizer = tried[-1]
    result.effects = _system_effects(fit, labels, index, level)
    vcomp = np.asarray(fit.vcomp)
    vc_names = list(fit.model.exog_vc.names)
    result.variances = {name: float(vcomp[i]) for i, name in enumerate(vc_names)}
    result.variances["residual"] = float(fit.scale)
    result.notes += _fit_notes(result, tried)
    return result


def _fit_notes(result: MixedModel, tried: list[str]) -> list[str]:
    """What the fit's warnings mean, in plain words (statsmodels' own warnings never reach the page nor the
    logs): which optimizer the estimates come from after a fallback, a fit that never converged, and a
    variance estimated at about zero."""
    notes = []
    words = [OPTIMIZER_WORDS[m] for m in tried]
    if not result.converged:
        notes.append(
            f"The mixed model did not settle: none of the optimizers tried ({', '.join(words)}) converged, "
            "so its estimates are shown but not to be relied on; read the tests and the bootstrap interval "
            "above instead."
        )
    elif len(tried) > 1:
        notes.append(
            f"The mixed model was fitted with {words[-1]}: {', '.join(words[:-1])} did not converge on these "
            "sessions first (a variance near zero makes the likelihood flat); the estimates come from the "
            "fit that converged."
        )
    residual = result.variances.get("residual", 0.0)
    for name in ("participant", "scenario"):
        variance = result.variances.get(name)
        if variance is not None and residual > 0 and variance <= BOUNDARY_SHARE * residual:
            notes.append(
                f"The {name}s' own levels come out at a variance of about 0 (under 1% of the sessions' "
                "residual variance): they differ hardly more than chance alone would make them, so the "
                f"system effect is about what a model without the {name} term gives."
            )
    return notes
    return result


def _why_not_fitted(result: MixedModel, n_systems: int, max_sessions: int) -> str:
    """Why the model is not fitted on this design, or "" when it is."""
    if n_systems < 2:
        return "The mixed model needs two systems or more."
    if result.n_sessions > max_sessions:
        return (
            f"The mixed model is not fitted on {result.n_sessions} sessions (more than {max_sessions}): "
            "statsmodels' crossed random effects grow with the square of the design; filter the "
            "dashboard (by scenario or system) or fit it from the CSV."
        )
    if result.n_participants < 2 or result.n_scenarios < 2 or result.n_sessions <= n_systems + 2:
        return (
            "The mixed model needs at least two participants, two scenarios and more sessions "
            "than parameters."
        )
    return ""


def _fit(values: np.ndarray, system_codes: list[str], participants, scenarios):
    """(statsmodels' REML fit, the optimizers tried, the last the fit's), or (the reason it failed, the
    optimizers tried). Each optimizer in MIXED_OPTIMIZERS' order until one converges."""
    import pandas as pd
    import statsmodels.formula.api as smf
    from threadpoolctl import threadpool_limits

    data = pd.DataFrame(
        {
            "value": values,
            "system": system_codes,
            "participant": pd.factorize(np.asarray(participants))[0],
            "scenario": pd.factorize(np.asarray(scenarios))[0],
            "group": np.zeros(len(values), dtype=np.int64),
        }
    )
    # One BLAS thread: the fit is many small products, and OpenBLAS's threads fighting over busy cores made
    # 400 sessions take 71 s instead of 3 s on a loaded 2-core machine. Every warning of the fit is caught
    # (statsmodels' ConvergenceWarning among them): the notes say what they meant.
    tried: list[str] = []
    fit = None
    with warnings.catch_warnings(record=True), threadpool_limits(limits=1, user_api="blas"):
        warnings.simplefilter("always")
        try:
            model = smf.mixedlm(
                MIXED_FORMULA, data, groups="group", re_formula="0", vc_formula=MIXED_VARIANCE_COMPONENTS
            )
            for method in MIXED_OPTIMIZERS:
                tried.append(method)
                fit = model.fit(reml=True, method=[method], maxiter=MIXED_MAXITER)
                if fit.converged:
                    break
        except (np.linalg.LinAlgError, ValueError) as exc:
            return f"The mixed model could not be fitted: {exc}.", tried
    return fit, tried


def _system_effects(fit, labels: list, index: dict, level: float) -> list[MixedEffect]:
    """Each system's coefficient against the reference (labels[0]) with its Wald interval and p, then
    Holm- and BH-adjusted over the systems when there are more than one."""
    names = list(fit.model.exog_names)
    params, bse = np.asarray(fit.fe_params), np.asarray(fit.bse_fe)
    z_crit = stats.norm.ppf(0.5 + level / 2.0)
    effects = []
    for label in labels[1:]:
        position = names.index(f"C(system)[T.s{index[label]:04d}]")
        estimate, se = float(params[position]), float(bse[position])
        z = estimate / se if se > 0 else float("nan")
        p = float(2.0 * stats.norm.sf(abs(z))) if np.isfinite(z) else float("nan")
        effects.append(
            MixedEffect(
                labels[0],
                label,
                estimate,
                se,
                float(estimate - z_crit * se),
                float(estimate + z_crit * se),
                z,
                p,
            )
        )
    if len(effects) > 1:
        p_values = [e.p_value for e in effects]
        effects = [
            replace(e, p_holm=float(h), p_bh=float(b))
            for e, h, b in zip(effects, holm(p_values), benjamini_hochberg(p_values), strict=True)
        ]
    return effects
