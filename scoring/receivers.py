"""What scoring does when the studies app says something changed (connected in ScoringConfig.ready)."""

from django.dispatch import receiver

from studies.signals import demo_study_loaded, reference_version_committed, sessions_finished

from .services import reference_version_changed, scoring_run_create, study_scores_mark_stale


@receiver(reference_version_committed, dispatch_uid="scoring.reference_version_committed")
def rescore_on_new_reference_version(sender, *, study_id: int, **kwargs) -> None:
    reference_version_changed(study_id=study_id)


@receiver(sessions_finished, dispatch_uid="scoring.sessions_finished")
def mark_scores_stale(sender, *, study_id: int, session_ids: list[int], **kwargs) -> None:
    study_scores_mark_stale(study_id=study_id, session_ids=session_ids)


@receiver(demo_study_loaded, dispatch_uid="scoring.demo_study_loaded")
def score_the_demo(sender, *, study, user, **kwargs) -> str:
    """Score the demo study with the paper's parameters (weights 0-1-10-100, b 2, bq 4, top 10)."""
    run = scoring_run_create(study=study, created_by=user, label="the paper's parameters")
    run.refresh_from_db()  # eager Celery has already scored it; with a worker it is queued
    return f"scoring run {run.pk} is {run.status}"
