"""A scoring run's parameters as the library takes them, and the error of a run that cannot be scored."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

from ..lib.session import PAPER_WEIGHTS, SessionParams
from ..lib.session_measures import MeasureParams
from ..models import ScoringRun

DEFAULT_WEIGHTS = PAPER_WEIGHTS  # on a 0..3 scale; other scales: session.default_weights


class ScoringError(ValueError):
    """A run that cannot be scored as asked (bad options, no reference judgments, a grade without weight)."""


def run_params(run: ScoringRun) -> SessionParams:
    """The SessionParams of a run. Exponential gain turns grade g into 2^g - 1 (SPEC: log2 with exponential
    gain); kanoulas2011 ignores the weights, as the library does."""
    weights = tuple(run.weights) or DEFAULT_WEIGHTS
    if run.gain == ScoringRun.Gain.EXPONENTIAL:
        weights = tuple(2.0**grade - 1.0 for grade in range(len(weights)))
    return SessionParams(
        weights=weights,
        b=run.b,
        bq=run.bq,
        top=run.top,
        formulation=run.formulation,
        duplicates=run.duplicates,
        short_lists=run.short_lists,
        scan=run.scan,
    )


def measure_params_for(*, top: int, b: float, bq: float, grades: Sequence[int]) -> MeasureParams:
    """The other measures' parameters for a run: the library's defaults, k = top X, the run's b and bq, and
    sRBP's top grade from the study's scale (1 when the scale has no grade above 0)."""
    return MeasureParams(k=top, b=b, bq=bq, grade_max=max([1, *grades]))


def run_measure_params(run: ScoringRun) -> MeasureParams:
    """The stored parameters (fields a later version dropped are ignored; ones it added take their
    defaults), so a run's numbers never change with a later default. sRBP's top grade is stored by every
    run (measure_params_for); one stored without it takes the study's scale's, never the largest grade of
    the sessions scored together."""
    known = {f.name for f in fields(MeasureParams)}
    stored = {name: value for name, value in (run.measure_params or {}).items() if name in known}
    if stored.get("grade_max") is None and "srbp" in (run.measures or ()):
        stored["grade_max"] = max([1, *run.study.grade_values()])
    return MeasureParams(**{"k": run.top, "b": run.b, "bq": run.bq, **stored})
