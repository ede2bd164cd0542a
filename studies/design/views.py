"""Researcher pages. Thin: an access-checked fetch, a form, a service call, a redirect or a render."""

from django.db import IntegrityError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_safe

from sessionlab.form_pages import form_post
from sessionlab.plurals import counted
from studies.accounts.access import researcher_required, study_for_researcher
from studies.design import lifecycle, selectors, services
from studies.design.collection_judgments import collection_reference_missing
from studies.design.forms import EnrolForm, ScenarioForm, SystemForm
from studies.errors import StudiesError
from studies.models import Study
from studies.signals import study_opened


def home(request):
    """Where "/" and a fresh login lead: researchers to their studies, assessors to their assessments."""
    if not request.user.is_authenticated:
        return redirect("login")
    if request.user.is_staff:
        return redirect("studies:study_list")
    return redirect("assessment:home")


@researcher_required
def study_list(request):
    return render(request, "studies/study_list.html", {"studies": selectors.studies_listed(request.user)})


@researcher_required
def study_detail(request, slug):
    study = study_for_researcher(request, slug)
    study_opened.send(sender=Study, study=study)  # without a beat, participation's overdue sweep runs here
    context = {
        "study": study,
        "grade_levels": study.grade_levels.all(),
        "scenarios": study.scenarios.order_by("id"),
        "systems": study.systems.order_by("id"),
        "balance": selectors.study_balance(study=study),
        # The collection's judgments no version holds yet: the page offers to add them.
        "collection_reference_missing": collection_reference_missing(study=study),
        "participants": selectors.study_participants_with_orders(study=study),
        **lifecycle_context(study),
        "scenario_form": ScenarioForm(prefix="scenario"),
        "system_form": SystemForm(prefix="system"),
        "enrol_form": EnrolForm(prefix="enrol"),
    }
    return render(request, "studies/study_detail.html", context)


@researcher_required
@require_safe
def study_progress(request, slug):
    """The study page's progress as an HTML fragment (templates/studies/_progress.html: the counts and the
    participant rows, the page's own includes), which static/js/study-progress.js swaps into the page every
    few seconds, without a reload."""
    study = study_for_researcher(request, slug)
    study_opened.send(sender=Study, study=study)  # the overdue sweep, at most once an interval, as the page
    context = {
        "study": study,
        "participants": selectors.study_participants_with_orders(study=study),
        "status": lifecycle.status_of(study),
        "counts": lifecycle.study_counts(study=study),
    }
    response = render(request, "studies/_progress.html", context)
    response["Cache-Control"] = "no-store"
    return response


def lifecycle_context(study) -> dict:
    """The status control's context (templates/studies/_status_control.html), for the study page and the
    recruitment page alike."""
    status = lifecycle.status_of(study)
    return {
        "status": status,
        "counts": lifecycle.study_counts(study=study),
        "missing_to_open": lifecycle.study_missing_to_open(study=study) if status == lifecycle.DRAFT else [],
        # Why no participant can be enrolled now (none while open): shown where the Enrol form would be.
        "enrolment_refusal": lifecycle.ENROLMENT_REFUSALS.get(status),
    }


def _post_form(request, study, form_class, prefix, action, success=None):
    """The design pages' use of the shared form pattern: the form's errors are prefixed by its name, the
    write runs in a transaction, and a code or topic used twice reads as a refusal."""
    return form_post(
        request,
        form_class(request.POST, prefix=prefix),
        action,
        refusals=(StudiesError, IntegrityError),
        refusal_text=lambda exc: (
            f"That {prefix} code or topic is already used in this study."
            if isinstance(exc, IntegrityError)
            else str(exc)
        ),
        success=success,
        redirect_to=redirect("studies:study_detail", slug=study.slug),
        error_label=f"{prefix} ",
        atomic=True,
    )


@researcher_required
def scenario_add_page(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":
        return _post_form(
            request, study, ScenarioForm, "scenario", lambda d: services.scenario_add(study=study, **d)
        )
    return redirect("studies:study_detail", slug=study.slug)


@researcher_required
def system_add_page(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":
        return _post_form(
            request, study, SystemForm, "system", lambda d: services.system_add(study=study, **d)
        )
    return redirect("studies:study_detail", slug=study.slug)


def _enrolled_message(enrolled) -> str:
    reissued = sum(p.reissue_of_id is not None for p in enrolled)
    freed = f" ({reissued} on rows freed by attrition, re-issued)" if reissued else ""
    orders = "a balanced order" if len(enrolled) == 1 else "balanced orders"
    return f"Enrolled {counted(len(enrolled), 'participant')} with {orders}{freed}."


@researcher_required
def participants_enrol_page(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":
        return _post_form(
            request,
            study,
            EnrolForm,
            "enrol",
            lambda d: services.participants_enrol(study=study, count=d["count"]),
            success=_enrolled_message,
        )
    return redirect("studies:study_detail", slug=study.slug)
