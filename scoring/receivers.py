"""What scoring does when the studies app says something changed (connected in ScoringConfig.ready)."""

from django.dispatch import receiver

from studies.signals import reference_version_committed

from .services import reference_version_changed


@receiver(reference_version_committed, dispatch_uid="scoring.reference_version_committed")
def rescore_on_new_reference_version(sender, *, study_id: int, **kwargs) -> None:
    reference_version_changed(study_id=study_id)
