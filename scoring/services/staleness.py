"""Keep the study's default run current: mark it stale and re-score what changed (sessions, judgments, a new
reference version), and queue again the passes that are owed."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from django.db.models import F, Q
from django.utils import timezone

from sessionlab import queueing
from studies.models import ReferenceJudgment, ReferenceVersion, SearchSession

from ..models import ScoringRun
from .passes import NOT_QUEUED, queue_pass


def study_scores_mark_stale(*, study_id: int, session_ids: Iterable[int] | None = None) -> ScoringRun | None:
    """Mark the study's default run stale and queue, on commit, a re-score of `session_ids` (all sessions if
    None). Call it after a session ends, or a participant's judgments change. Returns the run, or None if the
    study has no default run yet."""
    run = ScoringRun.objects.filter(study_id=study_id, is_default=True).first()
    if run is None:
        return None
    ids = None if session_ids is None else sorted({int(pk) for pk in session_ids})
    ScoringRun.objects.filter(pk=run.pk).update(stale=True, stale_since=timezone.now())
    queue_pass(run.pk, ids)
    return run


def reference_version_changed(*, study_id: int) -> ScoringRun | None:
    """Point the study's default run at the latest reference version and re-score, on commit, only the
    sessions of scenarios whose topic's judgments differ between the old and the new version. Nothing to do
    when the default run scores against the participants' own judgments."""
    run = ScoringRun.objects.filter(study_id=study_id, is_default=True).first()
    if run is None or run.judgments != ScoringRun.Judgments.REFERENCE:
        return None
    latest = ReferenceVersion.objects.filter(study_id=study_id).order_by("-number").first()
    if latest is None or latest.pk == run.reference_version_id:
        return None
    changed = _changed_topics(run.reference_version_id, latest.pk)
    ScoringRun.objects.filter(pk=run.pk).update(reference_version=latest)
    if not changed:
        return run
    session_ids = list(
        SearchSession.objects.filter(
            assignment__participant__study_id=study_id,
            assignment__scenario__topic_id__in=changed,
            assignment__participant__preview_at__isnull=True,
            assignment__scenario__practice=False,
        ).values_list("pk", flat=True)
    )
    if session_ids:
        ScoringRun.objects.filter(pk=run.pk).update(stale=True, stale_since=timezone.now())
        queue_pass(run.pk, session_ids)
    return run


def _changed_topics(old_version_id: int | None, new_version_id: int) -> set[str]:
    def judged(version_id):
        if version_id is None:
            return set()
        return set(
            ReferenceJudgment.objects.filter(version_id=version_id).values_list(
                "topic_id", "document_id", "grade"
            )
        )

    return {topic for topic, _, _ in judged(old_version_id) ^ judged(new_version_id)}


def stale_runs_requeue(*, stuck_after_minutes: int = 30) -> list[int]:
    """Queue a full pass of every run whose scoring is owed: a pass that could not be queued (NOT_QUEUED),
    stale with no pass begun since it was marked, never started, or running for longer than
    `stuck_after_minutes` (its tasks lost with a broker that restarted empty). Passes are idempotent, so
    queueing one twice costs time, not correctness. The assessment pools of those runs' studies are grown
    again too. Returns the ids of the runs queued (`manage.py requeue_stale_runs`, after a broker outage, or
    every REQUEUE_STALE_RUNS_SECONDS from the beat schedule)."""
    from studies.models import Scenario

    scoring_run_start_task = queueing.task_named("scoring.tasks.scoring_run_start_task")
    assessment_pools_grow_task = queueing.task_named("studies.tasks.assessment_pools_grow_task")
    stuck = timezone.now() - timedelta(minutes=stuck_after_minutes)
    owed = ScoringRun.objects.filter(
        Q(error__startswith=NOT_QUEUED)
        | Q(stale=True, started_at__isnull=True)
        | Q(stale=True, stale_since__gt=F("started_at"))
        | Q(status=ScoringRun.Status.PENDING, started_at__isnull=True)
        | Q(status=ScoringRun.Status.RUNNING, started_at__lt=stuck)
    ).order_by("pk")
    queued = [run.pk for run in owed if queueing.delay_or_log(scoring_run_start_task, run.pk, None)]
    studies = ScoringRun.objects.filter(pk__in=queued).values_list("study_id", flat=True).distinct()
    for study_id, scenario_id in Scenario.objects.filter(
        study_id__in=list(studies), assessment_pool__isnull=False
    ).values_list("study_id", "pk"):
        queueing.delay_or_log(assessment_pools_grow_task, study_id, scenario_id)
    return queued


def study_scores_current_refusal(study) -> str | None:
    """Why the study's events must stay in the log for scoring (studies/retention.py asks before archiving
    them), or None: its default run is done and fresh, so its stored scores hold what the events gave."""
    run = ScoringRun.objects.filter(study_id=study.pk, is_default=True).first()
    if run is None:
        return "not scored: the study has no default scoring run"
    if run.status != ScoringRun.Status.DONE or run.stale:
        state = "stale" if run.status == ScoringRun.Status.DONE else run.status
        return f"not scored: its default run ({run.pk}) is {state}; score it first"
    return None
