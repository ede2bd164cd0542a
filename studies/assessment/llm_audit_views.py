"""The robustness audit's pages, kept with the LLM assessor: start one from the assessor's page,
read it on its own (figures, verdict, items). Researchers only; services in studies/assessment/llm/audits."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from studies.accounts.access import researcher_required, study_for_researcher
from studies.assessment.llm import audits
from studies.assessment.llm import selectors as llm_selectors
from studies.assessment.llm.forms import LLMAuditForm
from studies.errors import AssessmentError


@researcher_required
@require_POST
def llm_audit_start_page(request, slug, pk):
    study = study_for_researcher(request, slug)
    assessor = llm_selectors.llm_assessor_of(study, pk)
    form = LLMAuditForm(request.POST, prefix="audit")
    if not form.is_valid():
        messages.error(request, f"seed: {' '.join(form.errors.get('seed', []))}")
        return redirect("assessment:llm_assessor", slug=study.slug, pk=assessor.pk)
    try:
        audit = audits.llm_audit_start(
            assessor=assessor, created_by=request.user, seed=form.cleaned_data["seed"]
        )
    except AssessmentError as error:
        messages.error(request, str(error))
        return redirect("assessment:llm_assessor", slug=study.slug, pk=assessor.pk)
    return redirect("assessment:llm_audit", slug=study.slug, pk=audit.pk)


@researcher_required
def llm_audit(request, slug, pk):
    study = study_for_researcher(request, slug)
    audit = llm_selectors.llm_audit_of(study, pk)
    context = {
        "study": study,
        "audit": audit,
        "assessor": audit.assessor,
        "figures": audit.figures,
        "items": llm_selectors.llm_audit_items(audit),
        "shown_at_most": llm_selectors.AUDIT_ITEMS_SHOWN,
    }
    return render(request, "assessment/llm_audit.html", context)
