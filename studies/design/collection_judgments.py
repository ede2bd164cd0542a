"""Reads of a collection's judgments as a study's reference: which of them the study may take,
the version that holds them, and how many are still missing. The writer is
studies.assessment.collection_reference.reference_version_from_collection; the set-up checklist and the
study page read these."""

from __future__ import annotations

from typing import cast

from django.db.models import Q

from studies.models import Collection, CollectionJudgment, ReferenceVersion, Study, collection_reference_note


def collection_judgments_in_scale(*, study: Study):
    """The judgments of the study's collection that its reference may take: those whose grade is a step of
    the study's scale (a collection's judgments off it are left out)."""
    if study.collection_id is None:
        return CollectionJudgment.objects.none()
    return CollectionJudgment.objects.filter(
        collection_id=study.collection_id, grade__in=study.grade_levels.values("value")
    ).order_by("id")


def collection_reference_version(*, study: Study) -> ReferenceVersion | None:
    """The study's reference version made from its collection's judgments (the first such), None when it
    has none: known by its provenance or, made earlier, by its note."""
    if study.collection_id is None:
        return None
    name = cast(Collection, study.collection).name
    return (
        ReferenceVersion.objects.filter(study=study)
        .filter(Q(provenance__collection=name) | Q(note=collection_reference_note(name)))
        .order_by("number")
        .first()
    )


def collection_reference_missing(*, study: Study) -> int:
    """How many of its collection's judgments the study's reference still lacks: those on its scale when no
    version holds them (the set-up checklist and the study page's repair button); 0 when none does."""
    if study.collection_id is None or collection_reference_version(study=study) is not None:
        return 0
    return collection_judgments_in_scale(study=study).count()
