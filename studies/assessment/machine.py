"""Machine assessors (issue 30): what a reference version records about one when its grades enter it."""

from __future__ import annotations

from studies.models import StudyAssessor


def machine_assessor_provenance(membership: StudyAssessor) -> dict:
    """The facts a reference version keeps about a machine assessor whose grades it took: who it is and, for
    a language model, the endpoint's model and the prompt's hash (filled in from the LLM assessor's
    settings)."""
    provenance: dict = {
        "assessor": membership.user.get_username(),
        "assessor_id": membership.pk,
        "kind": "llm" if membership.is_machine else "human",
    }
    return provenance
