"""A pass over a run's sessions: queue it on commit, start it (number it, chunk the session ids), score a
chunk (upserts keyed by run and session), close it; and fail a run."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.db import transaction
from django.db.models import Case, Exists, F, OuterRef, TextField, Value, When
from django.utils import timezone

from sessionlab import queueing
from studies.models import Query, SearchSession
from studies.retention import events_archived

from ..lib.metrics import GradeError
from ..lib.session import SUMMARIES
from ..models import QueryScore, ScoringRun, SessionScore
from .chunks import chunk_load, chunk_score
from .params import ScoringError

logger = logging.getLogger(__name__)


# Sessions per chunk task: small enough that a chunk's arrays stay a few MB, large enough to be worth a task.
CHUNK_SIZE = 500


# A pass that could not be queued (the broker was down) is owed: the run says so in its error, stays stale
# through partial passes, and `requeue_stale_runs` queues a full pass, which clears it.
NOT_QUEUED = "not queued: "
EVENTS_ARCHIVED = (
    "not scored: the study's events are archived (manage.py archive_events); restore them first with "
    "`manage.py restore_events <slug>`, then score again"
)


def queue_pass(run_id: int, session_ids: list[int] | None) -> None:
    """Queue a pass on commit. A broker that is down does not fail the caller (sessionlab/queueing.py)."""

    def owed(exc):
        ScoringRun.objects.filter(pk=run_id).update(
            stale=True,
            stale_since=timezone.now(),
            error=f"{NOT_QUEUED}the broker was unreachable ({exc}); `manage.py requeue_stale_runs` queues it"[
                :2000
            ],
        )

    queueing.delay_on_commit(
        queueing.task_named("scoring.tasks.scoring_run_start_task"), run_id, session_ids, on_failure=owed
    )


def _scorable(study_id: int):
    """Sessions a run scores: ended (not withdrawn) with at least one query, never a preview's nor a practice
    task's (Scenario.practice: logged like any task, never scored)."""
    return SearchSession.objects.filter(
        Exists(Query.objects.filter(session_id=OuterRef("pk"))),
        assignment__participant__study_id=study_id,
        ended_at__isnull=False,
        assignment__participant__preview_at__isnull=True,
        assignment__scenario__practice=False,
    ).exclude(end_reason=SearchSession.EndReason.WITHDRAWN)


def scoring_pass_start(
    *, run_id: int, session_ids: list[int] | None = None, chunk_size: int = CHUNK_SIZE
) -> tuple[int, list[list[int]]] | None:
    """Begin a pass over the run's sessions (or only `session_ids`): drop results of sessions that are no
    longer scorable, number the pass, and return (pass number, chunks of session ids). None if the run is
    gone."""
    run = ScoringRun.objects.filter(pk=run_id).first()
    if run is None:
        return None
    # The time measures and observed depths read the events: never score a study without them.
    if events_archived(run.study_id):
        scoring_run_fail(run_id=run_id, message=EVENTS_ARCHIVED)
        return None
    scorable = _scorable(run.study_id)
    if session_ids is not None:
        scorable = scorable.filter(pk__in=session_ids)
        gone = set(session_ids) - set(scorable.values_list("pk", flat=True))
        if gone:
            SessionScore.objects.filter(run_id=run_id, session_id__in=gone).delete()
            QueryScore.objects.filter(run_id=run_id, session_id__in=gone).delete()
    ids = sorted(scorable.values_list("pk", flat=True))
    with transaction.atomic():
        ScoringRun.objects.filter(pk=run_id).update(current_pass=F("current_pass") + 1)
        run.refresh_from_db(fields=["current_pass"])
        # Only a full pass pays what a pass that could not be queued owed.
        error = (
            Value("")
            if session_ids is None
            else Case(
                When(error__startswith=NOT_QUEUED, then=F("error")),
                default=Value(""),
                output_field=TextField(),
            )
        )
        ScoringRun.objects.filter(pk=run_id).update(
            status=ScoringRun.Status.RUNNING,
            error=error,
            progress_done=0,
            progress_total=len(ids),
            started_at=timezone.now(),
            finished_at=None,
        )
    return run.current_pass, [ids[i : i + chunk_size] for i in range(0, len(ids), chunk_size)]


def scoring_pass_finish(*, run_id: int, pass_number: int, full: bool) -> None:
    """Close a pass: on a full pass drop rows of sessions it did not score; mark the run done (unless a chunk
    failed) and fresh (unless marked stale again since the pass began); bump the chart cache generation."""
    run = ScoringRun.objects.filter(pk=run_id).first()
    if run is None:
        return
    if full and run.current_pass == pass_number:
        SessionScore.objects.filter(run_id=run_id).exclude(pass_number=pass_number).delete()
        QueryScore.objects.filter(run_id=run_id).exclude(
            session_id__in=SessionScore.objects.filter(run_id=run_id).values("session_id")
        ).delete()
    current = ScoringRun.objects.filter(pk=run_id, current_pass=pass_number)
    done = SessionScore.objects.filter(run_id=run_id, pass_number=pass_number).count()
    current.exclude(status=ScoringRun.Status.FAILED).update(
        status=ScoringRun.Status.DONE, progress_done=done, finished_at=timezone.now()
    )
    fresh = current.filter(status=ScoringRun.Status.DONE).exclude(error__startswith=NOT_QUEUED)
    fresh.filter(stale_since__isnull=True).update(stale=False)
    fresh.filter(stale_since__lte=F("started_at")).update(stale=False)
    ScoringRun.objects.filter(pk=run_id).update(generation=F("generation") + 1)


def scoring_run_fail(*, run_id: int, message: str) -> None:
    ScoringRun.objects.filter(pk=run_id).update(
        status=ScoringRun.Status.FAILED, error=message[:2000], finished_at=timezone.now()
    )


def scoring_chunk_score(*, run_id: int, pass_number: int, session_ids: Sequence[int]) -> int:
    """Score one chunk of sessions and upsert their results, keyed by (run, session) and (run, query): doing
    it twice leaves one result set. Returns the number of sessions scored."""
    run = ScoringRun.objects.filter(pk=run_id).select_related("study").first()
    if run is None:
        return 0
    try:
        chunk = chunk_load(run, session_ids)
        if not chunk.sessions:
            return 0
        rows, query_rows = chunk_score(run, chunk, pass_number)
    except (ScoringError, GradeError, ValueError) as exc:
        logger.warning("scoring run %s failed: %s", run_id, exc)
        scoring_run_fail(run_id=run_id, message=str(exc))
        return 0
    with transaction.atomic():
        SessionScore.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["run", "session"],
            update_fields=_SESSION_FIELDS,
            batch_size=500,
        )
        QueryScore.objects.bulk_create(
            query_rows,
            update_conflicts=True,
            unique_fields=["run", "query"],
            update_fields=_QUERY_FIELDS,
            batch_size=1000,
        )
        done = SessionScore.objects.filter(run_id=run_id, pass_number=pass_number).count()
        ScoringRun.objects.filter(pk=run_id, current_pass=pass_number).update(progress_done=done)
    return len(rows)


_SESSION_FIELDS = [
    "participant",
    "scenario",
    "system",
    "end_reason",
    "n_queries",
    "length",
    *SUMMARIES,
    "ideal_final",
    "unjudged",
    "curve",
    "ideal",
    "grid",
    "measures",
    "pass_number",
]


_QUERY_FIELDS = ["session", "position", "is_last", "sdcg", "by_rank"]
