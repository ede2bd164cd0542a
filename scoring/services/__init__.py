"""Scoring runs: create them, score their sessions chunk by chunk, keep the study's default run current.

Writes live here; `scoring/tasks.py` only calls these with ids. The math is `scoring/lib/session.py`. One
module per concern: params.py (a run's parameters, ScoringError), runs.py (create, make default), passes.py
(queue, start, score a chunk, finish), chunks.py (a chunk's loading and scoring), staleness.py (the hooks
below and the requeue of owed passes). Callers import from `scoring.services`; the names are re-exported here.

Hooks for the rest of the project (call them inside the transaction that made the change; the re-score is
queued on commit and never blocks the caller):
- `study_scores_mark_stale(study_id=..., session_ids=[...])` after a session ends or a participant's judgments
  change (session_ids=None re-scores the whole study);
- `reference_version_changed(study_id=...)` after a new reference version is published or imported.

Whether a run is current is never read from ScoringRun.stale (the work queue of re-scores) but decided when
read, by scoring/freshness.py.
"""

from .chunks import session_trails
from .params import DEFAULT_WEIGHTS, ScoringError, measure_params_for, run_measure_params, run_params
from .passes import (
    CHUNK_SIZE,
    NOT_QUEUED,
    scoring_chunk_score,
    scoring_pass_finish,
    scoring_pass_start,
    scoring_run_fail,
)
from .runs import scoring_run_create, scoring_run_make_default
from .staleness import (
    reference_version_changed,
    run_bring_up_to_date,
    stale_runs_requeue,
    study_scores_mark_stale,
)

__all__ = [
    "CHUNK_SIZE",
    "DEFAULT_WEIGHTS",
    "NOT_QUEUED",
    "ScoringError",
    "measure_params_for",
    "reference_version_changed",
    "run_measure_params",
    "run_bring_up_to_date",
    "run_params",
    "scoring_chunk_score",
    "scoring_pass_finish",
    "scoring_pass_start",
    "scoring_run_create",
    "scoring_run_fail",
    "scoring_run_make_default",
    "session_trails",
    "stale_runs_requeue",
    "study_scores_mark_stale",
]
