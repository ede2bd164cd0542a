"""The one way a collection's judgments become a study's reference:
`reference_version_from_collection`.

Every way a study is built on a collection calls it: the New-study form and the REST API
(studies.library.services.study_create_on_collection), a collection chosen on its page and a copy
(study_collection_attach), an archive that brings no reference versions, a Session Track import, and the
repair of a study made before it did (the study page's button, `manage.py repair_reference`). It is
idempotent: a study that already has a version from its collection gets nothing new.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from sessionlab.plurals import counted
from studies.assessment.references import judgment_copied, reference_version_create
from studies.design.collection_judgments import collection_judgments_in_scale, collection_reference_version
from studies.models import ReferenceJudgment, ReferenceVersion, Study, collection_reference_note


@dataclass(frozen=True)
class CollectionReference:
    """What `reference_version_from_collection` did: `version` is the new one (`created`) or the one that
    already holds the collection's judgments (None when there is nothing to make); `words` says which."""

    version: ReferenceVersion | None
    created: bool
    words: str


@transaction.atomic
def reference_version_from_collection(*, study: Study, by=None) -> CollectionReference:
    """Give `study` its collection's judgments (those whose grade is a step of its scale) as a reference
    version, unless one already holds them. With no version yet, it is the first; a study that has versions
    but none from its collection (made on the New-study form when it did not yet take the collection's
    judgments, then assessed) gets a new version: the collection's judgments with the latest version's over
    them (its grade kept where both judge a document), so nothing published is lost."""
    # The study row alone is locked: PostgreSQL refuses FOR UPDATE on the nullable side of an outer join.
    study = Study.objects.select_for_update().get(pk=study.pk)
    collection = study.collection
    if collection is None:
        return CollectionReference(None, False, "The study has no collection: nothing to do.")
    existing = collection_reference_version(study=study)
    if existing is not None:
        return CollectionReference(
            existing,
            False,
            f"Nothing done: reference version {existing.number} already holds the judgments of "
            f"“{collection.name}”.",
        )
    judgments = list(collection_judgments_in_scale(study=study))
    if not judgments:
        return CollectionReference(
            None, False, f"Nothing done: “{collection.name}” has no judgments on the study's grade scale."
        )
    rows = {
        (j.topic_id, j.document_id): ReferenceJudgment(
            topic_id=j.topic_id,
            document_id=j.document_id,
            grade=j.grade,
            source=f"collection {collection.name}"[:200],
        )
        for j in judgments
    }
    latest = study.reference_versions.order_by("-number").first()
    kept = 0
    if latest is not None:
        for row in latest.judgments.all():
            rows[(row.topic_id, row.document_id)] = judgment_copied(row)
            kept += 1
    provenance: dict = {"collection": collection.name, "collection_judgments": len(judgments)}
    if latest is not None:
        provenance |= {"kept_from": latest.number, "kept": kept}
    version = reference_version_create(
        study=study,
        created_by=by,
        note=collection_reference_note(collection.name),
        judgments=rows.values(),
        provenance=provenance,
    )
    over = f", with the {counted(kept, 'judgment')} of version {latest.number} over them" if latest else ""
    return CollectionReference(
        version,
        True,
        f"Reference version {version.number} made: the {counted(len(judgments), 'judgment')} "
        f"of “{collection.name}”{over}.",
    )
