"""The pre-registration page (draft answers, freeze, the deviations since) and its two downloads: Markdown and
preregr-shaped JSON. Thin: the services check and write, document.py renders."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render

from studies.accounts.access import researcher_required, study_for_researcher

from ..lib.session import SUMMARIES, SUMMARY_LABELS
from ..models import PowerPlan
from . import document, exports, services


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
    content = exports.content_of(study, prereg)
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
            "frozen_line": exports.frozen_line(prereg),
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
    return _download(
        study, exports.preregistration_markdown_text(study), "md", "text/markdown; charset=utf-8"
    )


@researcher_required
def preregistration_json(request, slug):
    study = study_for_researcher(request, slug)
    return _download(study, exports.preregistration_json_text(study), "json", "application/json")
