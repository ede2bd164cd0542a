"""The pre-registration page (draft answers, freeze, the deviations since) and its two downloads: Markdown and
preregr-shaped JSON. Thin: the services check and write, document.py renders."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render

from studies.design.views import researcher_required, study_for_researcher

from ..lib.session import SUMMARIES, SUMMARY_LABELS
from ..models import PowerPlan
from . import document, services


def _frozen_line(prereg) -> str:
    if prereg.frozen_at is None:
        return "Draft: not frozen; the answers and the study's facts may still change."
    return f"Frozen on {prereg.frozen_at:%Y-%m-%d %H:%M} UTC; SHA-256 {prereg.digest}."


def _content(study, prereg) -> dict:
    if prereg.frozen_at is not None:
        return prereg.frozen["content"]
    return services.current_document(study, prereg.answers or services.proposed_answers(study))[1]


@researcher_required
def preregistration_page(request, slug):
    study = study_for_researcher(request, slug)
    prereg = services.preregistration_read(study)
    status = 200
    if request.method == "POST":
        answers = {name: request.POST.get(name, "") for name in (*services.TEXT_ANSWERS, "primary_summary")}
        answers |= {name: request.POST.get(name) for name in ("planned_participants", "power_plan")}
        try:
            if request.POST.get("action") == "freeze":
                services.preregistration_freeze(study=study, by=request.user, answers=answers)
                messages.success(request, "Pre-registration frozen; later changes are listed as deviations.")
            else:
                services.preregistration_answers_save(study=study, answers=answers)
                messages.success(request, "Draft saved.")
        except services.PreregistrationError as exc:
            messages.error(request, str(exc))
            prereg.answers, status = {**prereg.answers, **answers}, 400
        else:
            return redirect("scoring:preregistration", slug=study.slug)
    content = _content(study, prereg)
    items = [(item, content[item.item_id]) for item in document.ITEMS]
    plans = PowerPlan.objects.filter(study=study, status=PowerPlan.Status.DONE).order_by("-finished_at")[:20]
    return render(
        request,
        "scoring/preregistration.html",
        {
            "study": study,
            "prereg": prereg,
            "answers": prereg.answers,
            "items": items,
            "frozen_line": _frozen_line(prereg),
            "deviations": services.preregistration_deviations(study, prereg),
            "digest_holds": services.preregistration_digest_holds(prereg),
            "summaries": [(name, SUMMARY_LABELS.get(name, name)) for name in SUMMARIES],
            "plans": plans,
            "is_owner": study.owner_id == request.user.pk,
        },
        status=status,
    )


def _download(study, text: str, suffix: str, content_type: str) -> HttpResponse:
    response = HttpResponse(text, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-preregistration.{suffix}"'
    return response


@researcher_required
def preregistration_markdown(request, slug):
    study = study_for_researcher(request, slug)
    prereg = services.preregistration_read(study)
    deviations = [d.text() for d in services.preregistration_deviations(study, prereg)]
    text = document.as_markdown(_content(study, prereg), frozen=_frozen_line(prereg), deviations=deviations)
    return _download(study, text, "md", "text/markdown; charset=utf-8")


@researcher_required
def preregistration_json(request, slug):
    study = study_for_researcher(request, slug)
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
    text = document.as_preregr_json(_content(study, prereg), sessionlab=record)
    return _download(study, text, "json", "application/json")
