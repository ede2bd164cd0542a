"""Create a scoring run (checked, with the latest reference version, its first pass queued) and make a run
the study's default."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from django.db import transaction

from studies.models import ReferenceVersion, Study
from studies.retention import events_archived

from ..lib.session import SessionParams, default_weights
from ..lib.session_measures import MeasureParams, check_measures
from ..models import GRID_B, GRID_BQ, ScoringRun
from .params import ScoringError, measure_params_for
from .passes import EVENTS_ARCHIVED, queue_pass
from .staleness import run_bring_up_to_date


def scoring_run_create(
    *,
    study: Study,
    created_by=None,
    label: str = "",
    weights: Sequence[float] | None = None,
    b: float = 2.0,
    bq: float = 4.0,
    top: int = 10,
    formulation: str = "2008",
    gain: str = ScoringRun.Gain.LINEAR,
    duplicates: str = "every",
    short_lists: str = "pad",
    scan: str = "fixed",
    scan_min_visible_ms: int = 1000,
    judgments: str = ScoringRun.Judgments.REFERENCE,
    measures: Sequence[str] = (),
    make_default: bool | None = None,
) -> ScoringRun:
    """Create a run with the latest reference version and queue its scoring on commit. The study's first run
    becomes its default run unless make_default=False. Without weights, those of the study's grade scale
    (`session.default_weights`: the paper's 0, 1, 10, 100 on 0..3). `measures` names the other session
    measures to compute for each session (scoring.lib.session_measures.MEASURES); their parameters are the
    library's defaults with the run's top, b and bq, stored on the run."""
    weights = tuple(float(w) for w in (default_weights(study.grade_values()) if weights is None else weights))
    measures, measure_params = _checked_options(
        study=study,
        weights=weights,
        b=b,
        bq=bq,
        top=top,
        formulation=formulation,
        gain=gain,
        duplicates=duplicates,
        short_lists=short_lists,
        scan=scan,
        judgments=judgments,
        measures=measures,
    )
    if not isinstance(scan_min_visible_ms, int) or not 0 <= scan_min_visible_ms <= 600_000:
        raise ScoringError("scan_min_visible_ms must be a whole number of milliseconds from 0 to 600000")
    if events_archived(study.pk):
        raise ScoringError(EVENTS_ARCHIVED)
    version = _reference_version(study, judgments)
    with transaction.atomic():
        default = _default_taken(study, make_default)
        run = ScoringRun.objects.create(
            study=study,
            created_by=created_by,
            label=label,
            weights=list(weights),
            b=b,
            bq=bq,
            top=top,
            formulation=formulation,
            gain=gain,
            duplicates=duplicates,
            short_lists=short_lists,
            scan=scan,
            scan_min_visible_ms=scan_min_visible_ms,
            judgments=judgments,
            reference_version=version if judgments == ScoringRun.Judgments.REFERENCE else None,
            grid_b=list(GRID_B),
            grid_bq=list(GRID_BQ),
            is_default=default,
            measures=measures,
            measure_params=asdict(measure_params),
        )
        queue_pass(run.pk, None)
    return run


def _checked_options(
    *,
    study: Study,
    weights: tuple[float, ...],
    b: float,
    bq: float,
    top: int,
    formulation: str,
    gain: str,
    duplicates: str,
    short_lists: str,
    scan: str,
    judgments: str,
    measures: Sequence[str],
) -> tuple[list[str], MeasureParams]:
    """Refuse options the library or the study's scale cannot score (ScoringError naming the option); return
    the measures, checked, and their parameters."""
    try:
        SessionParams(
            weights=weights,
            b=b,
            bq=bq,
            top=top,
            formulation=formulation,
            duplicates=duplicates,
            short_lists=short_lists,
            scan=scan,
        )
    except ValueError as exc:
        raise ScoringError(str(exc)) from None
    if gain not in ScoringRun.Gain.values:
        raise ScoringError(f"unknown gain {gain!r}; choose linear or exponential")
    if judgments not in ScoringRun.Judgments.values:
        raise ScoringError(f"unknown judgments {judgments!r}; choose reference or participant")
    grades = study.grade_values()
    try:
        checked = list(check_measures(list(measures)))
        measure_params = measure_params_for(top=top, b=b, bq=bq, grades=grades)
    except ValueError as exc:
        raise ScoringError(str(exc)) from None
    if formulation != "kanoulas2011" and grades and max(grades) >= len(weights):
        raise ScoringError(
            f"the study's grades go to {max(grades)} but the weights give gains for grades "
            f"0..{len(weights) - 1}"
        )
    return checked, measure_params


def _reference_version(study: Study, judgments: str) -> ReferenceVersion | None:
    """The study's latest reference version; a run scored against it needs one."""
    version = study.reference_versions.order_by("-number").first()
    if judgments == ScoringRun.Judgments.REFERENCE and version is None:
        raise ScoringError(
            "the study has no reference judgments yet: publish or import a reference version, "
            "or score against the participants' own judgments"
        )
    return version


def _default_taken(study: Study, make_default: bool | None) -> bool:
    """Whether the new run is the study's default (the first run is, unless make_default=False); a new default
    takes the flag from the old one. Call inside the transaction: the study row is locked so that two first
    runs do not both become the default."""
    locked = Study.objects.select_for_update().get(pk=study.pk)
    has_default = ScoringRun.objects.filter(study=locked, is_default=True).exists()
    default = (not has_default) if make_default is None else make_default
    if default and has_default:
        ScoringRun.objects.filter(study=locked, is_default=True).update(is_default=False)
    return default


def scoring_run_make_default(*, run: ScoringRun) -> ScoringRun:
    """Make `run` the study's default (live) run and bring it up to date: an older run is pointed
    at the latest reference version and the sessions it owes are re-scored on commit
    (staleness.run_bring_up_to_date); until that is done its pages say it is not current (freshness.py)."""
    with transaction.atomic():
        ScoringRun.objects.filter(study_id=run.study_id, is_default=True).exclude(pk=run.pk).update(
            is_default=False
        )
        ScoringRun.objects.filter(pk=run.pk).update(is_default=True)
        run.is_default = True
        run_bring_up_to_date(run=run)
    return run
