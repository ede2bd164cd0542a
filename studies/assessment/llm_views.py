"""The LLM assessor's pages, reached from the study's assessment page: set one up or change it,
start a run, follow it (the page refreshes while it runs), read its requests, cancel it. Researchers only
(studies.accounts.access); services in studies/assessment/llm/."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_POST

from studies.accounts.access import researcher_required, study_for_researcher
from studies.assessment.llm import runs, setup
from studies.assessment.llm import selectors as llm_selectors
from studies.assessment.llm.endpoint_test import llm_endpoint_test
from studies.assessment.llm.forms import LLMAssessorForm, LLMAuditForm, LLMRunForm
from studies.errors import AssessmentError
from studies.models import LLMRequest

EDITABLE = setup.EDITABLE


def _assessor_page(request, study, assessor, form, status=200, endpoint_test=None):
    if assessor is None or not assessor.api_key_encrypted:
        form.fields.pop("clear_api_key", None)  # no stored key: nothing to remove
    context = {
        "study": study,
        "assessor": assessor,
        "form": form,
        "run_form": LLMRunForm(prefix="run", study=study) if assessor else None,
        "runs": assessor.runs.all()[:50] if assessor else [],
        "audit_form": LLMAuditForm(prefix="audit") if assessor else None,
        "audits": assessor.audits.all()[:20] if assessor else [],
        "endpoint_test": endpoint_test,
    }
    return render(request, "assessment/llm_assessor.html", context, status=status)


@sensitive_post_parameters("api_key")  # an error report must not carry it
@researcher_required
def llm_assessor_add(request, slug):
    study = study_for_researcher(request, slug)
    form = LLMAssessorForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        data.pop("clear_api_key")
        try:
            assessor = setup.llm_assessor_create(study=study, created_by=request.user, **data)
        except AssessmentError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, f"LLM assessor {assessor.membership.user.username} set up.")
            return redirect("assessment:llm_assessor", slug=study.slug, pk=assessor.pk)
    return _assessor_page(request, study, None, form, status=400 if form.errors else 200)


@sensitive_post_parameters("api_key")
@researcher_required
def llm_assessor(request, slug, pk):
    study = study_for_researcher(request, slug)
    assessor = llm_selectors.llm_assessor_of(study, pk)
    if request.method == "POST":
        form = LLMAssessorForm(request.POST)
        if form.is_valid():
            try:
                setup.llm_assessor_update(assessor=assessor, changed_by=request.user, **form.cleaned_data)
            except AssessmentError as error:
                form.add_error(None, str(error))
            else:
                messages.success(request, "Settings saved.")
                return redirect("assessment:llm_assessor", slug=study.slug, pk=assessor.pk)
        return _assessor_page(request, study, assessor, form, status=400)
    form = LLMAssessorForm(initial={name: getattr(assessor, name) for name in EDITABLE})
    return _assessor_page(request, study, assessor, form)


@researcher_required
@require_POST
def llm_endpoint_check(request, slug, pk):
    """One tiny request with the saved settings; the page shows what came of it."""
    study = study_for_researcher(request, slug)
    assessor = llm_selectors.llm_assessor_of(study, pk)
    form = LLMAssessorForm(initial={name: getattr(assessor, name) for name in EDITABLE})
    return _assessor_page(request, study, assessor, form, endpoint_test=llm_endpoint_test(assessor=assessor))


@researcher_required
@require_POST
def llm_run_start_page(request, slug, pk):
    study = study_for_researcher(request, slug)
    assessor = llm_selectors.llm_assessor_of(study, pk)
    form = LLMRunForm(request.POST, prefix="run", study=study)
    if not form.is_valid():
        messages.error(request, f"scenarios: {' '.join(form.errors.get('scenarios', []))}")
        return redirect("assessment:llm_assessor", slug=study.slug, pk=assessor.pk)
    try:
        run = runs.llm_run_start(
            assessor=assessor, created_by=request.user, scenarios=list(form.cleaned_data["scenarios"])
        )
    except AssessmentError as error:
        messages.error(request, str(error))
        return redirect("assessment:llm_assessor", slug=study.slug, pk=assessor.pk)
    return redirect("assessment:llm_run", slug=study.slug, pk=run.pk)


@researcher_required
def llm_run(request, slug, pk):
    study = study_for_researcher(request, slug)
    run = llm_selectors.llm_run_of(study, pk)
    status = request.GET.get("status", "")
    if status not in LLMRequest.Status.values:
        status = ""
    requests, counts = llm_selectors.llm_run_requests(run, status)
    context = {
        "study": study,
        "run": run,
        "assessor": run.assessor,
        "requests": requests,
        "counts": [(value, label, counts.get(value, 0)) for value, label in LLMRequest.Status.choices],
        "status": status,
        "shown_at_most": llm_selectors.REQUESTS_SHOWN,
    }
    return render(request, "assessment/llm_run.html", context)


@researcher_required
@require_POST
def llm_run_cancel_page(request, slug, pk):
    study = study_for_researcher(request, slug)
    run = llm_selectors.llm_run_of(study, pk)
    if runs.llm_run_cancel(run=run, by=request.user):
        messages.success(request, "Run cancelled: no further request is sent.")
    else:
        messages.error(request, "This run had already ended.")
    return redirect("assessment:llm_run", slug=study.slug, pk=run.pk)
