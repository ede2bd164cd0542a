"""Assessment pages. Researchers (staff, through studies.accounts.access) manage pools, assessors,
agreement, adjudication and reference versions; assessors (non-staff members of a study) judge documents.
Thin views: an access-checked fetch, a form of studies/assessment/forms.py, a call into the services of
studies/assessment/ through sessionlab.form_pages.form_post (the one "bind, call, flash" pattern), a redirect
or a render."""

from functools import wraps
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from scoring.lib.errors import InputError
from sessionlab.form_pages import flash_form_errors, form_post
from sessionlab.plurals import counted
from studies.accounts.access import researcher_required, studies_visible_to, study_for_researcher
from studies.assessment import adjudication, assessor_work, assessors, pools, references, work_views
from studies.assessment import selectors as assessment_selectors
from studies.assessment.assessor_figures import assessor_figures
from studies.assessment.exclusion import DEFAULT_MEASURE, exclusion_apply
from studies.assessment.forms import (
    DecideForm,
    ExclusionRuleForm,
    GradeForm,
    InviteForm,
    PlanForm,
    PoolAddForm,
    PoolBuildForm,
    PresetForm,
    PublishForm,
    QrelsUploadForm,
)
from studies.assessment.highlighting import highlighted
from studies.assessment.llm.selectors import llm_assessors_of, llm_audits_latest
from studies.design import services as design_services
from studies.errors import AssessmentError, StudiesError
from studies.models import AssessorInvitation, PoolDocument, ReferenceVersion, StudyAssessor


def _uploaded_lines(upload) -> list[str]:
    try:
        return upload.read().decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise InputError(upload.name, None, "not UTF-8 text") from None


def _manage(study):
    return redirect("assessment:manage", slug=study.slug)


# --- Researcher pages -----------------------------------------------------------------------------------


@login_required
def home(request):
    if request.user.is_staff:
        studies = studies_visible_to(request.user).order_by("-created_at")
        return render(request, "assessment/researcher_home.html", {"studies": studies})
    memberships = StudyAssessor.objects.filter(user=request.user).select_related("study")
    invitations = AssessorInvitation.objects.filter(
        user=request.user, status=AssessorInvitation.Status.PENDING
    ).select_related("study", "invited_by")
    return render(
        request, "assessment/assessor_home.html", {"memberships": memberships, "invitations": invitations}
    )


@login_required
@require_POST
def invitation_answer(request, pk):
    """The invited assessor accepts or declines; anyone else's invitation (or an answered one) is a 404."""
    invitation = get_object_or_404(
        AssessorInvitation.objects.select_related("study"),
        pk=pk,
        user=request.user,
        status=AssessorInvitation.Status.PENDING,
    )
    answer = request.POST.get("answer")
    if answer not in ("accept", "decline"):
        messages.error(request, "Answer accept or decline.")
        return redirect("assessment:home")
    try:
        assessors.assessor_invitation_answer(
            invitation=invitation, user=request.user, accept=answer == "accept"
        )
    except AssessmentError as exc:
        messages.error(request, str(exc))
        return redirect("assessment:home")
    if answer == "accept":
        messages.success(request, f"You now assess “{invitation.study.name}”.")
    else:
        messages.success(request, f"You declined to assess “{invitation.study.name}”.")
    return redirect("assessment:home")


@researcher_required
def manage(request, slug):
    return _manage_page(request, study_for_researcher(request, slug))


def _manage_page(request, study, *, invite_form=None, status=200):
    """The study's assessment page; `invite_form`: a bound invitation form whose errors show beside its
    fields."""
    per_assessor, per_scenario = assessment_selectors.assessment_progress(study=study)
    plan = study.assessment_plan if hasattr(study, "assessment_plan") else None
    context = {
        "study": study,
        "per_assessor": per_assessor,
        "per_scenario": per_scenario,
        "versions": study.reference_versions.order_by("-number"),
        "pool_form": PoolBuildForm(prefix="pool"),
        "add_form": PoolAddForm(prefix="add"),
        "pool_import_form": QrelsUploadForm(prefix="poolqrels"),
        "plan_form": PlanForm(
            prefix="plan",
            initial={
                "assessors_per_document": plan.assessors_per_document if plan else 1,
                "double_judged_percent": (plan.double_judged_percent or 0) if plan else 0,
                "highlight_participant_queries": bool(plan and plan.highlight_participant_queries),
            },
        ),
        "invite_form": invite_form or InviteForm(prefix="invite"),
        "invitations": study.assessor_invitations.exclude(status=AssessorInvitation.Status.ACCEPTED)
        .select_related("user")
        .order_by("-invited_at"),
        "preset_form": PresetForm(prefix="adjudicate"),
        "publish_form": PublishForm(prefix="publish", study=study),
        "version_import_form": QrelsUploadForm(prefix="refqrels"),
        "llm_assessors": llm_assessors_of(study),
        **work_views.manage_context(study),
    }
    return render(request, "assessment/manage.html", context, status=status)


@researcher_required
def pool_build_page(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":

        def built(changes):
            summary = "; ".join(
                f"{code}: +{c.added} −{c.removed}"
                + (f" ({c.kept_judged} kept, already judged)" if c.kept_judged else "")
                for code, c in changes.items()
            )
            return f"Pools built. {summary}"

        return form_post(
            request,
            PoolBuildForm(request.POST, prefix="pool"),
            lambda data: pools.pool_build(study=study, rule=data["rule"], top_x=data["top_x"]),
            refusals=(StudiesError,),
            success=built,
            redirect_to=_manage(study),
        )
    return _manage(study)


@researcher_required
def pool_refresh(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":
        changes = pools.pool_build(study=study)
        added = sum(c.added for c in changes.values())
        messages.success(request, f"Pools updated with the sessions so far: {added} new documents.")
    return _manage(study)


@researcher_required
def pool_add(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":

        def add(data):
            scenario = study.scenarios.filter(code=data["scenario"].strip()).first()
            if scenario is None:
                raise AssessmentError(f"No scenario {data['scenario']!r} in this study.")
            added = pools.pool_add_documents(
                scenario=scenario, external_ids=data["external_ids"].split(), added_by=request.user
            )
            return f"{counted(added, 'document')} added to the pool of {scenario.code}."

        return form_post(
            request,
            PoolAddForm(request.POST, prefix="add"),
            add,
            refusals=(StudiesError,),
            success=lambda text: text,
            redirect_to=_manage(study),
        )
    return _manage(study)


@researcher_required
def pool_import(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":

        def import_qrels(data):
            upload = data["qrels"]
            added = pools.pool_import_qrels(
                study=study, lines=_uploaded_lines(upload), path=upload.name, added_by=request.user
            )
            return f"{counted(added, 'document')} from {upload.name} added to the pools."

        return form_post(
            request,
            QrelsUploadForm(request.POST, request.FILES, prefix="poolqrels"),
            import_qrels,
            refusals=(InputError, StudiesError),
            refusal_text=lambda exc: f"Nothing imported: {exc}",
            success=lambda text: text,
            redirect_to=_manage(study),
        )
    return _manage(study)


@researcher_required
def plan_set(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":
        return form_post(
            request,
            PlanForm(request.POST, prefix="plan"),
            lambda data: assessors.assessment_plan_set(study=study, **data),
            refusals=(StudiesError,),
            success=work_views.plan_text,
            redirect_to=_manage(study),
        )
    return _manage(study)


@researcher_required
def assessor_invite_page(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":

        def invited(result):
            membership, password = result
            login = request.build_absolute_uri(reverse("login") + "?next=" + reverse("assessment:home"))
            if isinstance(membership, AssessorInvitation):
                return (
                    f"{membership.user.username} assesses for another lab: they are asked to accept "
                    f"on their assessor page ({login}) before they see this study."
                )
            if password:
                return (
                    f"Assessor {membership.user.username} created. Their one-time password: {password} "
                    f"(shown once). They log in at {login}"
                )
            return f"{membership.user.username} now assesses this study ({login})."

        # Errors are shown beside the form's fields on the page itself, not flashed above it.
        form = InviteForm(request.POST, prefix="invite")
        if not form.is_valid():
            return _manage_page(request, study, invite_form=form, status=400)
        try:
            result = assessors.assessor_invite(study=study, invited_by=request.user, **form.cleaned_data)
        except StudiesError as refusal:
            form.add_error("username", str(refusal))
            return _manage_page(request, study, invite_form=form, status=400)
        messages.success(request, invited(result))
    return _manage(study)


@researcher_required
def agreement(request, slug):
    study = study_for_researcher(request, slug)
    rule_form = ExclusionRuleForm(
        request.POST if request.method == "POST" else None,
        initial={
            "exclusion_min_agreement": study.exclusion_min_agreement,
            "exclusion_measure": study.exclusion_measure or DEFAULT_MEASURE,
            "exclusion_min_documents": study.exclusion_min_documents,
        },
    )
    if request.method == "POST" and rule_form.is_valid():
        # The rule is applied at once: the marks below say who it excludes (docs/recruitment.md, "Checks").
        design_services.study_update(study=study, **rule_form.cleaned_data)
        outcome = exclusion_apply(study=study)
        messages.success(request, f"Exclusion rule saved: {len(outcome.excluded)} participant(s) excluded.")
        return redirect("assessment:agreement", slug=study.slug)
    version = None
    if request.GET.get("version"):
        version = get_object_or_404(study.reference_versions, number=request.GET["version"])
    reference, per_participant, per_scenario = adjudication.participant_reference_agreement(
        study=study, version=version
    )
    context = {
        "study": study,
        "blocks": adjudication.assessor_agreement(study=study),
        "figures": assessor_figures(study=study),
        "llm_audits": list(llm_audits_latest(study).values()),
        "grade_levels": study.grade_levels.all(),
        "reference": reference,
        "versions": study.reference_versions.order_by("-number"),
        "per_participant": per_participant,
        "per_scenario": per_scenario,
        "rule_form": rule_form,
        "excluded": dict(
            study.participants.filter(excluded_at__isnull=False).values_list("code", "excluded_reason")
        ),
    }
    return render(request, "assessment/agreement.html", context, status=400 if rule_form.errors else 200)


@researcher_required
def disagreements_page(request, slug):
    study = study_for_researcher(request, slug)
    context = {
        "study": study,
        "rows": assessment_selectors.disagreements(study=study),
        "grade_levels": study.grade_levels.all(),
        "preset_form": PresetForm(prefix="adjudicate"),
    }
    return render(request, "assessment/disagreements.html", context)


@researcher_required
def adjudicate_page(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":

        def adjudicated(result):
            return (
                f"Decided: {result.decided_text()}. For you to decide: {len(result.to_researcher)}. "
                f"Kept by hand: {result.kept_by_hand}. Awaiting judgments: {result.awaiting_judgments}."
            )

        return form_post(
            request,
            PresetForm(request.POST, prefix="adjudicate"),
            lambda data: adjudication.adjudicate(study=study, preset=data["preset"], decided_by=request.user),
            refusals=(StudiesError,),
            success=adjudicated,
            redirect_to=redirect("assessment:disagreements", slug=study.slug),
            refused_to=_manage(study),
        )
    return _manage(study)


@researcher_required
def decide(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":

        def decide_one(data):
            pool_document = get_object_or_404(
                PoolDocument.objects.select_related("pool__scenario__study", "document"),
                pk=data["pool_document"],
                pool__scenario__study=study,
            )
            adjudication.adjudication_decide(
                pool_document=pool_document, grade=data["grade"], decided_by=request.user, note=data["note"]
            )
            return f"{pool_document.document}: grade {data['grade']}."

        return form_post(
            request,
            DecideForm(request.POST),
            decide_one,
            refusals=(StudiesError,),
            success=lambda text: text,
            redirect_to=redirect("assessment:disagreements", slug=study.slug),
        )
    return redirect("assessment:disagreements", slug=study.slug)


def _publish_query(study, form) -> str:
    """The preview's address for the choices of a bound PublishForm (the digest left out)."""
    fields = {name: values for name, values in form.data.lists() if name.startswith("publish-")}
    fields.pop("publish-digest", None)
    return reverse("assessment:publish", args=[study.slug]) + "?" + urlencode(fields, doseq=True)


@researcher_required
def publish(request, slug):
    """GET: the preview of a publication (what changes, per topic); POST from the preview: publish it. A POST
    without the preview's digest goes to the preview first, so nothing is published unseen."""
    study = study_for_researcher(request, slug)
    data = request.POST if request.method == "POST" else request.GET
    form = PublishForm(data, prefix="publish", study=study)
    if not form.is_valid():
        flash_form_errors(request, form)
        return _manage(study)
    if request.method == "POST" and form.cleaned_data["digest"]:
        return form_post(
            request,
            form,
            lambda data: references.reference_version_publish(
                study=study,
                created_by=request.user,
                note=data["note"],
                expected_digest=data["digest"],
                **form.plan_arguments(),
            ),
            refusals=(StudiesError,),
            success=lambda version: (
                f"Reference version {version.number} published "
                f"({counted(version.judgments.count(), 'judgment')})."
            ),
            redirect_to=_manage(study),
            refused_to=redirect(_publish_query(study, form)),
        )
    if request.method == "POST":
        return redirect(_publish_query(study, form))
    try:
        plan = references.reference_version_publish_plan(study=study, **form.plan_arguments())
    except StudiesError as exc:
        messages.error(request, str(exc))
        return _manage(study)
    confirm = PublishForm(initial={**form.cleaned_data, "digest": plan.digest}, prefix="publish", study=study)
    for name in ("mode", "base", "allow_pending", "machine"):
        if name in confirm.fields:
            confirm.fields[name].widget = forms.HiddenInput()
    if "rules" in confirm.fields:
        confirm.fields["rules"].widget = forms.MultipleHiddenInput()
    return render(
        request,
        "assessment/publish_preview.html",
        {"study": study, "plan": plan, "confirm_form": confirm, "totals": plan.totals},
    )


@researcher_required
def version_qrels(request, slug, number):
    study = study_for_researcher(request, slug)
    version = get_object_or_404(ReferenceVersion, study=study, number=number)
    response = HttpResponse(
        references.reference_version_qrels(version=version), content_type="text/plain; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-v{version.number}.qrels"'
    return response


@researcher_required
def version_import(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":

        def import_version(data):
            upload = data["qrels"]
            version = references.reference_version_import_qrels(
                study=study,
                lines=_uploaded_lines(upload),
                path=upload.name,
                created_by=request.user,
                note=data["note"],
            )
            judgments, topics = assessment_selectors.reference_version_other_topics(version=version)
            others = (
                f" {counted(judgments, 'judgment')} of {counted(topics, 'topic')} that "
                f"{'is' if topics == 1 else 'are'} not scenarios {'was' if judgments == 1 else 'were'} kept; "
                "they score nothing."
                if judgments
                else ""
            )
            return f"Reference version {version.number} imported from {upload.name}.{others}"

        return form_post(
            request,
            QrelsUploadForm(request.POST, request.FILES, prefix="refqrels"),
            import_version,
            refusals=(InputError, StudiesError),
            refusal_text=lambda exc: f"Nothing imported: {exc}",
            success=lambda text: text,
            redirect_to=_manage(study),
        )
    return _manage(study)


# --- Assessor pages -------------------------------------------------------------------------------------


def assessor_required(view):
    """A logged-in member assessor of the study in the URL; anyone else gets 404 (the study's existence is
    not theirs to learn). Passes the membership instead of the slug."""

    @login_required
    @wraps(view)
    def wrapper(request, slug, *args, **kwargs):
        membership = (
            StudyAssessor.objects.select_related("study").filter(study__slug=slug, user=request.user).first()
        )
        if membership is None:
            raise Http404("No such study among your assessments.")
        return view(request, membership, *args, **kwargs)

    return wrapper


@assessor_required
def assessor_study(request, membership):
    judged = set(membership.user.assessor_judgments.values_list("pool_document_id", flat=True))
    rows = []
    for scenario in membership.study.scenarios.filter(practice=False).order_by("id"):  # practice: unscored
        queue = assessment_selectors.assessor_queue(membership=membership, scenario=scenario)
        rows.append((scenario, len(queue), sum(pd.id in judged for pd in queue)))
    return render(request, "assessment/assessor_study.html", {"study": membership.study, "rows": rows})


def _posted_grade(request) -> int:
    form = GradeForm(request.POST)
    if not form.is_valid():
        raise AssessmentError(f"the grade must be a whole number, not {request.POST.get('grade', '')[:20]!r}")
    return int(form.cleaned_data["grade"])


HIGHLIGHTING_OFF = "assessment_highlighting_off"  # session key: the assessor switched highlighting off


@assessor_required
def assessor_form(request, membership, code):
    study = membership.study
    scenario = get_object_or_404(study.scenarios.filter(practice=False), code=code)
    queue = assessment_selectors.assessor_queue(membership=membership, scenario=scenario)
    grades = dict(
        membership.user.assessor_judgments.filter(pool_document__in=queue).values_list(
            "pool_document_id", "grade"
        )
    )
    here = reverse("assessment:assessor_form", args=[study.slug, scenario.code])
    if request.method == "POST" and "highlighting" in request.POST:
        # Per assessor (their session), on every scenario's form until they switch it back.
        request.session[HIGHLIGHTING_OFF] = request.POST["highlighting"] == "off"
        back = request.POST.get("doc", "")
        return redirect(f"{here}?doc={back}" if back.isdigit() else here)
    if request.method == "POST":
        position = next(
            (i for i, pd in enumerate(queue) if str(pd.id) == request.POST.get("pool_document")), None
        )
        if position is None:
            raise Http404("That document is not in your list.")
        try:
            grade = _posted_grade(request)
            assessors.assessor_judgment_record(
                assessor=request.user, pool_document=queue[position], grade=grade
            )
        except AssessmentError as exc:
            messages.error(request, f"Not saved: {exc}")
            return redirect(f"{here}?doc={queue[position].id}")
        grades[queue[position].id] = grade
        after = next((pd for pd in queue[position + 1 :] if pd.id not in grades), None)
        after = after or next((pd for pd in queue if pd.id not in grades), None)
        return redirect(f"{here}?doc={after.id}" if after else f"{here}?done=1")
    position = None
    if request.GET.get("doc"):
        position = next((i for i, pd in enumerate(queue) if str(pd.id) == request.GET["doc"]), None)
        if position is None:
            raise Http404("That document is not in your list.")
    elif not request.GET.get("done"):
        # Resume: the first document of their order they have not judged yet.
        position = next((i for i, pd in enumerate(queue) if pd.id not in grades), None)
    context = {
        "study": study,
        "scenario": scenario,
        "grade_levels": study.grade_levels.all(),
        "total": len(queue),
        "judged": len(grades),
        "here": here,
        "first": queue[0] if queue else None,
        "guidelines": assessor_work.guidelines_for(scenario=scenario),
        "highlighting": not request.session.get(HIGHLIGHTING_OFF, False),
    }
    if position is not None:
        current = queue[position]
        terms = (
            assessor_work.scenario_highlight_terms(scenario=scenario)
            if context["highlighting"]
            else frozenset()
        )
        context.update(
            {
                "current": current,
                "document": current.document,
                "document_title": highlighted(current.document.title or current.document.external_id, terms),
                "document_text": highlighted(current.document.text, terms),
                "position": position + 1,
                "current_grade": grades.get(current.id),
                "previous": queue[position - 1] if position > 0 else None,
                "next": queue[position + 1] if position + 1 < len(queue) else None,
            }
        )
    return render(request, "assessment/assessor_form.html", context)
