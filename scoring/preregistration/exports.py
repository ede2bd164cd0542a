"""The pre-registration as files: Markdown and preregr-shaped JSON (the page's downloads), and the JSON as a
member of the study's tables zip once it exists (registered in scoring/apps.py)."""

from __future__ import annotations

from studies.models import Study

from ..models import Preregistration
from . import document, services


def frozen_line(prereg: Preregistration) -> str:
    if prereg.frozen_at is None:
        return "Draft: not frozen; the answers and the study's facts may still change."
    return f"Frozen on {prereg.frozen_at:%Y-%m-%d %H:%M} UTC; SHA-256 {prereg.digest}."


def content_of(study: Study, prereg: Preregistration) -> dict:
    """The frozen items, or the draft's as they would be frozen now."""
    if prereg.frozen_at is not None:
        return prereg.frozen["content"]
    return services.current_document(study, prereg.answers or services.proposed_answers(study))[1]


def preregistration_markdown_text(study: Study) -> str:
    prereg = services.preregistration_read(study)
    deviations = [d.text() for d in services.preregistration_deviations(study, prereg)]
    return document.as_markdown(content_of(study, prereg), frozen=frozen_line(prereg), deviations=deviations)


def preregistration_json_text(study: Study) -> str:
    prereg = services.preregistration_read(study)
    record = {
        "study": study.slug,
        "frozen_at": prereg.frozen_at.isoformat() if prereg.frozen_at else None,
        "sha256": prereg.digest or None,
        "facts": prereg.frozen.get("facts") if prereg.frozen_at else None,
        "deviations": [
            {"part": d.part, "planned": d.planned, "now": d.now}
            for d in services.preregistration_deviations(study, prereg)
        ],
    }
    return document.as_preregr_json(content_of(study, prereg), sessionlab=record)


def preregistration_member(study) -> str | None:
    """preregistration.json in the study's tables zip: only once one was saved or frozen."""
    if not Preregistration.objects.filter(study=study).exists():
        return None
    return preregistration_json_text(study)
