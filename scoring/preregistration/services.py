"""A study's pre-registration, written: the draft's answers saved (each checked, refused by field), and the
freeze, once (the document as it stands, its SHA-256 and time). Reads: `preregistration_read` and
`preregistration_deviations` (derived from the frozen facts and the study now, facts.py)."""

from __future__ import annotations

import hashlib
import json

from django.db import transaction
from django.utils import timezone

from studies.models import Participant, SearchSession, Study

from ..lib.session import SUMMARIES, SUMMARY_LABELS
from ..models import PowerPlan, Preregistration
from ..planning.selectors import plan_curve
from . import document
from .facts import Deviation, deviations, study_facts

TEXT_ANSWERS = ("hypotheses", "analysis", "other")
ANSWER_MAX_CHARS = 5000
MAX_PARTICIPANTS = 100_000
DEFAULT_ANALYSIS = (
    "A paired t-test of the participants' mean {summary} on each system (each participant works both), "
    "two-sided, alpha 0.05; a Wilcoxon signed-rank test as a check; the mixed model of the dashboard "
    "(participant and scenario as random effects) as a secondary analysis."
)


class PreregistrationError(ValueError):
    """A refused answer or action; the message starts with the field's name."""


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise PreregistrationError(message)


def preregistration_read(study: Study) -> Preregistration:
    """The study's pre-registration, or an unsaved draft with the proposed answers (nothing is written)."""
    found = Preregistration.objects.filter(study=study).first()
    return found if found is not None else Preregistration(study=study, answers=proposed_answers(study))


def _newest_plan(study: Study) -> PowerPlan | None:
    return (
        PowerPlan.objects.filter(study=study, status=PowerPlan.Status.DONE).order_by("-finished_at").first()
    )


def proposed_answers(study: Study) -> dict:
    """What the form proposes: the newest finished power plan's count reaching its target, its measure."""
    plan = _newest_plan(study)
    summary = plan.summary if plan is not None else "normalized_final"
    planned = None
    if plan is not None:
        planned = plan_curve(plan).smallest
    return {
        "hypotheses": "",
        "analysis": DEFAULT_ANALYSIS.format(summary=SUMMARY_LABELS.get(summary, summary)),
        "other": "",
        "primary_summary": summary,
        "planned_participants": planned,
        "power_plan": plan.pk if plan is not None else None,
    }


def _plan_text(study: Study, plan_id: int | None) -> str:
    if plan_id is None:
        return ""
    plan = (
        PowerPlan.objects.filter(study=study, pk=plan_id)
        .select_related("first_system", "second_system")
        .first()
    )
    _check(plan is not None, f"power_plan: no power plan {plan_id} in this study")
    assert plan is not None
    smallest = plan_curve(plan).smallest if plan.status == PowerPlan.Status.DONE else None
    reach = f"{plan.target:.0%} power at {smallest} participants" if smallest else "its target not reached"
    first = plan.first_system.code if plan.first_system else "?"
    second = plan.second_system.code if plan.second_system else "?"
    return (
        f"Power plan #{plan.pk} ({second} vs {first}, {plan.summary}, {plan.test}, "
        f"{plan.get_effect_display()}, {plan.replications} Monte Carlo replications per count): {reach}."
    )


def answers_clean(study: Study, raw: dict) -> dict:
    """The answers checked one by one; PreregistrationError names the first refused field."""
    answers = {}
    for name in TEXT_ANSWERS:
        value = raw.get(name, "")
        _check(isinstance(value, str), f"{name}: text, not {type(value).__name__}")
        _check(
            len(value) <= ANSWER_MAX_CHARS, f"{name}: at most {ANSWER_MAX_CHARS} characters, got {len(value)}"
        )
        _check("\x00" not in value, f"{name}: a NUL character is not text")
        answers[name] = value
    summary = raw.get("primary_summary") or "normalized_final"
    _check(summary in SUMMARIES, f"primary_summary: one of {', '.join(SUMMARIES)}, not {str(summary)[:40]!r}")
    answers["primary_summary"] = summary
    planned = raw.get("planned_participants")
    if planned in (None, ""):
        answers["planned_participants"] = None
    else:
        try:
            number = int(planned)
        except (TypeError, ValueError):
            raise PreregistrationError(
                f"planned_participants: a whole number, not {str(planned)[:40]!r}"
            ) from None
        _check(
            1 <= number <= MAX_PARTICIPANTS,
            f"planned_participants: between 1 and {MAX_PARTICIPANTS}, got {number}",
        )
        answers["planned_participants"] = number
    plan = raw.get("power_plan")
    if plan in (None, ""):
        answers["power_plan"] = None
    else:
        try:
            answers["power_plan"] = int(plan)
        except (TypeError, ValueError):
            raise PreregistrationError(f"power_plan: a plan's number, not {str(plan)[:40]!r}") from None
    answers["power_plan_text"] = _plan_text(study, answers["power_plan"])
    return answers


@transaction.atomic
def preregistration_answers_save(*, study: Study, answers: dict) -> Preregistration:
    cleaned = answers_clean(study, answers)
    prereg, _ = Preregistration.objects.select_for_update().get_or_create(study=study)
    _check(prereg.frozen_at is None, "preregistration: it is frozen; nothing in it changes")
    prereg.answers = cleaned
    prereg.save(update_fields=["answers"])
    return prereg


def _sessions_done(study: Study) -> int:
    return SearchSession.objects.filter(assignment__participant__study=study, ended_at__isnull=False).count()


def current_document(study: Study, answers: dict) -> tuple[dict, dict]:
    """(the study's facts now, the document's content) for these answers."""
    summary = answers.get("primary_summary") or "normalized_final"
    facts = study_facts(study, primary_summary=summary)
    content = document.document(
        study_name=study.name,
        facts=facts,
        answers=answers,
        sessions_done=_sessions_done(study),
        summary_label=SUMMARY_LABELS.get(summary, summary),
    )
    return facts, content


def _digest(record: dict) -> str:
    return hashlib.sha256(json.dumps(record, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@transaction.atomic
def preregistration_freeze(*, study: Study, by, answers: dict | None = None) -> Preregistration:
    """Freeze the pre-registration (the answers given, else those saved): once; never changed after."""
    _check(study.owner_id == getattr(by, "pk", None), "preregistration: only the study's owner freezes it")
    prereg, _ = Preregistration.objects.select_for_update().get_or_create(study=study)
    if prereg.frozen_at is not None:
        raise PreregistrationError(
            f"preregistration: frozen already, on {prereg.frozen_at:%Y-%m-%d %H:%M} UTC"
        )
    cleaned = answers_clean(
        study, answers if answers is not None else prereg.answers or proposed_answers(study)
    )
    facts, content = current_document(study, cleaned)
    record = {"facts": facts, "answers": cleaned, "content": content}
    prereg.answers, prereg.frozen, prereg.digest = cleaned, record, _digest(record)
    prereg.frozen_at, prereg.frozen_by = timezone.now(), by
    prereg.save()
    return prereg


def preregistration_digest_holds(prereg: Preregistration) -> bool:
    """Whether the stored record still hashes to its digest (nothing edited it behind the service)."""
    return bool(prereg.frozen_at) and _digest(prereg.frozen) == prereg.digest


def preregistration_deviations(study: Study, prereg: Preregistration | None = None) -> list[Deviation]:
    """The deviations of the study now from its frozen plan ([] while it is a draft)."""
    prereg = prereg or Preregistration.objects.filter(study=study).first()
    if prereg is None or prereg.frozen_at is None:
        return []
    frozen_facts = prereg.frozen["facts"]
    now = study_facts(study, primary_summary=frozen_facts["primary_measure"]["summary"])
    enrolled = Participant.objects.filter(study=study, preview_at__isnull=True).count()
    return deviations(
        frozen_facts,
        now,
        planned_participants=prereg.frozen["answers"].get("planned_participants"),
        enrolled=enrolled,
        closed=study.status == "closed",
    )


def preregistration_note(study: Study) -> dict:
    """What the scoring pages say of it (templates/scoring/_preregistration_note.html)."""
    prereg = Preregistration.objects.filter(study=study).first()
    frozen = prereg is not None and prereg.frozen_at is not None
    return {
        "preregistration_frozen": frozen,
        "preregistration_deviations": preregistration_deviations(study, prereg) if frozen else [],
    }
