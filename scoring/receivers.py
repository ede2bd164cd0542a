"""What scoring does when the studies app says something changed (connected in ScoringConfig.ready)."""

from django.dispatch import receiver

from studies.signals import participant_withdrawn, reference_version_committed, sessions_finished

from .services import reference_version_changed, study_scores_mark_stale
from .withdrawal import participant_scores_delete


@receiver(reference_version_committed, dispatch_uid="scoring.reference_version_committed")
def rescore_on_new_reference_version(sender, *, study_id: int, **kwargs) -> None:
    reference_version_changed(study_id=study_id)


@receiver(sessions_finished, dispatch_uid="scoring.sessions_finished")
def mark_scores_stale(sender, *, study_id: int, session_ids: list[int], **kwargs) -> None:
    study_scores_mark_stale(study_id=study_id, session_ids=session_ids)


@receiver(participant_withdrawn, dispatch_uid="scoring.participant_withdrawn")
def delete_withdrawn_scores(
    sender, *, study_id: int, participant_id: int, session_ids: list[int], audit_entry_id: int, **kwargs
) -> None:
    participant_scores_delete(
        study_id=study_id,
        participant_id=participant_id,
        session_ids=session_ids,
        audit_entry_id=audit_entry_id,
    )
