"""Machine assessors (issue 30): what a reference version records about one when its grades enter it."""

from __future__ import annotations

import urllib.parse

from studies.assessment.llm.prompts import prompt_hash
from studies.models import StudyAssessor


def machine_assessor_provenance(membership: StudyAssessor) -> dict:
    """The facts a reference version keeps about a machine assessor whose grades it took: who it is and, for
    a language model, the model, the endpoint's host (never its key, nor the URL's path or query) and the
    prompt's hash (studies.assessment.llm.prompts.prompt_hash: the template's source and the model)."""
    provenance: dict = {
        "assessor": membership.user.get_username(),
        "assessor_id": membership.pk,
        "kind": "llm" if membership.is_machine else "human",
    }
    if membership.is_machine:
        llm = membership.llm
        provenance |= {
            "model": llm.model_name,
            "endpoint_host": urllib.parse.urlsplit(llm.endpoint_url).hostname or "",
            "prompt_hash": prompt_hash(llm.prompt_template, llm.model_name),
        }
    return provenance
