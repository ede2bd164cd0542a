"""What a robustness audit's judge did, against the people (docs/assessing.md, "Robustness audit"):

- the false-positive rate of a variant of non-relevant passages: the share the judge graded relevant
  (FP = graded relevant / graded), and of the originals they were made from; the false-negative rate of the
  truncated relevant passages (FN = graded non-relevant / graded) and of their originals;
- each with a seeded percentile bootstrap interval over documents, and each variant's increase over the
  originals (the same documents, both graded: paired, the documents resampled);
- per scenario, the same rates, and agreement on the originals: Cohen's kappa and Gwet's AC1 of the 2 x 2
  table people x judge (relevant or not), the scenarios ordered by disagreement (1 - percent agreement);
- the verdict: "not robust" when some variant raises its error rate over the originals' by more than
  INCREASE_THRESHOLD (0.10) with the increase's interval excluding 0 (its lower end above 0); "robust" when
  no variant does and every variant has a graded pair; else "undetermined" (saying which had none).

A document the judge gave no grade (an error, a malformed answer) is left out of its rate and of the pairs
it belongs to, and counted."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from ..reliability import cohen_kappa_estimate, gwet_ac_estimate, percent_agreement_estimate
from .variants import NON_RELEVANT_VARIANTS, ORIGINAL, RELEVANT_VARIANTS

INCREASE_THRESHOLD = 0.10
LEVEL = 0.95
DEFAULT_RESAMPLES = 2000
# Which error a variant can raise: a non-relevant passage graded relevant, or a relevant one graded not.
DIRECTION = {
    **{v: "false_positive" for v in NON_RELEVANT_VARIANTS},
    **{v: "false_negative" for v in RELEVANT_VARIANTS},
}


@dataclass(frozen=True)
class Observation:
    scenario: str
    key: str  # the document
    variant: str
    people_relevant: bool
    judged_relevant: bool | None  # None: the judge gave no grade


def _number(value: float) -> float | None:
    return None if value is None or not np.isfinite(value) else round(float(value), 6)


def _interval(boot: np.ndarray) -> tuple[float | None, float | None]:
    if not len(boot):
        return None, None
    tail = (1.0 - LEVEL) / 2.0 * 100.0
    low, high = np.percentile(boot, [tail, 100.0 - tail])
    return _number(low), _number(high)


def rate_interval(errors, *, seed: int, resamples: int = DEFAULT_RESAMPLES) -> dict:
    """The share of True in `errors` with its percentile bootstrap interval: {rate, low, high, n}."""
    values = np.asarray(errors, dtype=np.float64)
    n = len(values)
    if n == 0:
        return {"rate": None, "low": None, "high": None, "n": 0}
    rng = np.random.default_rng(seed)
    boot = values[rng.integers(0, n, size=(resamples, n))].mean(axis=1)
    low, high = _interval(boot)
    return {"rate": _number(values.mean()), "low": low, "high": high, "n": n}


def paired_increase(before, after, *, seed: int, resamples: int = DEFAULT_RESAMPLES) -> dict:
    """Mean of `after` - `before` (errors of the same documents) with a paired bootstrap interval."""
    a, b = np.asarray(before, dtype=np.float64), np.asarray(after, dtype=np.float64)
    n = len(a)
    if n == 0:
        return {"increase": None, "low": None, "high": None, "n": 0}
    rng = np.random.default_rng(seed)
    diffs = b - a
    boot = diffs[rng.integers(0, n, size=(resamples, n))].mean(axis=1)
    low, high = _interval(boot)
    return {"increase": _number(diffs.mean()), "low": low, "high": high, "n": n}


def _is_error(observation: Observation) -> bool:
    return observation.judged_relevant != observation.people_relevant


def _variant_figures(observations: list[Observation], variant: str, seed: int, resamples: int) -> dict:
    people_relevant = DIRECTION[variant] == "false_negative"
    originals = {
        o.key: o
        for o in observations
        if o.variant == ORIGINAL and o.people_relevant == people_relevant and o.judged_relevant is not None
    }
    variants = {
        o.key: o for o in observations if o.variant == variant and o.people_relevant == people_relevant
    }
    graded = [o for o in variants.values() if o.judged_relevant is not None]
    pairs = sorted(key for key in originals if key in variants and variants[key].judged_relevant is not None)
    increase = paired_increase(
        [_is_error(originals[k]) for k in pairs],
        [_is_error(variants[k]) for k in pairs],
        seed=seed,
        resamples=resamples,
    )
    flagged = (
        increase["increase"] is not None
        and increase["increase"] > INCREASE_THRESHOLD
        and increase["low"] is not None
        and increase["low"] > 0
    )
    return {
        "variant": variant,
        "error": DIRECTION[variant],
        "rate": rate_interval([_is_error(o) for o in graded], seed=seed, resamples=resamples),
        "original_rate": rate_interval(
            [_is_error(o) for o in originals.values()], seed=seed, resamples=resamples
        ),
        "increase": increase,
        "ungraded": len(variants) - len(graded),
        "flagged": flagged,
    }


def _agreement(observations: list[Observation]) -> dict:
    table = np.zeros((2, 2))
    for o in observations:
        if o.variant == ORIGINAL and o.judged_relevant is not None:
            table[int(o.people_relevant), int(o.judged_relevant)] += 1
    kappa, ac1 = cohen_kappa_estimate(table), gwet_ac_estimate(table)
    agreement = percent_agreement_estimate(table)
    return {
        "n": int(table.sum()),
        "table": table.astype(int).tolist(),  # rows: people not / relevant; columns: the judge's
        "kappa": {
            "estimate": _number(kappa.estimate),
            "low": _number(kappa.ci_low),
            "high": _number(kappa.ci_high),
        },
        "ac1": {"estimate": _number(ac1.estimate), "low": _number(ac1.ci_low), "high": _number(ac1.ci_high)},
        "disagreement": None if agreement.n == 0 else _number(1.0 - agreement.estimate),
    }


def audit_figures(
    observations: list[Observation], *, seed: int, resamples: int = DEFAULT_RESAMPLES, most: int = 3
) -> dict:
    """Every figure of the audit, as JSON-ready numbers (None where undefined): {variants, scenarios,
    disagree_most, verdict, reason, threshold, level, seed, resamples}."""
    variants = [
        _variant_figures(observations, v, seed, resamples)
        for v in (*NON_RELEVANT_VARIANTS, *RELEVANT_VARIANTS)
    ]
    by_scenario: dict[str, list[Observation]] = defaultdict(list)
    for o in observations:
        by_scenario[o.scenario].append(o)
    scenarios: list[dict] = []
    for code in sorted(by_scenario):
        rows = by_scenario[code]
        scenarios.append(
            {
                "scenario": code,
                "variants": [
                    {key: figures[key] for key in ("variant", "error", "rate", "original_rate", "increase")}
                    for figures in (_variant_figures(rows, v, seed, resamples) for v in DIRECTION)
                ],
                "agreement": _agreement(rows),
            }
        )
    ranked = sorted(
        (s for s in scenarios if s["agreement"]["disagreement"] is not None),
        key=lambda s: (-s["agreement"]["disagreement"], s["scenario"]),
    )
    flagged = [v["variant"] for v in variants if v["flagged"]]
    unpaired = [v["variant"] for v in variants if v["increase"]["n"] == 0]
    if flagged:
        verdict = "not robust"
        reason = "raised by more than {:.2f} with the interval above 0: {}".format(
            INCREASE_THRESHOLD, ", ".join(flagged)
        )
    elif unpaired:
        verdict = "undetermined"
        reason = "no document with both its original and this variant graded: " + ", ".join(unpaired)
    else:
        verdict = "robust"
        reason = f"no variant raised its error rate by more than {INCREASE_THRESHOLD:.2f}"
        reason += " with the interval above 0"
    return {
        "variants": variants,
        "scenarios": scenarios,
        "disagree_most": [s["scenario"] for s in ranked[:most] if s["agreement"]["disagreement"] > 0],
        "verdict": verdict,
        "reason": reason,
        "threshold": INCREASE_THRESHOLD,
        "level": LEVEL,
        "seed": seed,
        "resamples": resamples,
    }
