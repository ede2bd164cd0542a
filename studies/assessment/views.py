"""Assessment pages. Researchers (staff, through studies.design.views' access check) manage pools, assessors,
agreement, adjudication and reference versions; assessors (non-staff members of a study) judge documents.
Thin views: an access-checked fetch, a small form, a call into the services of studies/assessment/, a redirect or render."""

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
from studies.assessment import adjudication, assessors, pools, references
from studies.assessment import selectors as assessment_selectors
from studies.design import selectors
from studies.design.views import researcher_required, study_for_researcher
from studies.errors import AssessmentError
from studies.models import AssessmentPool, AssessorInvitation, PoolDocument, ReferenceVersion, StudyAssessor

# --- Forms ----------------------------------------------------------------------------------------------


class PoolBuildForm(forms.Form):
    rule = forms.ChoiceField(choices=AssessmentPool.Rule.choices)
    top_x = forms.IntegerField(min_value=1, max_value=1000, initial=pools.DEFAULT_TOP_X, label="X")


class PoolAddForm(forms.Form):
    scenario = forms.CharField(max_length=40, help_text="Scenario code")
    external_ids = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), help_text="Document ids, one a line"
    )


class QrelsUploadForm(forms.Form):
    qrels = forms.FileField()
    note = forms.CharField(max_length=300, required=False)


class PlanForm(forms.Form):
    assessors_per_document = forms.IntegerField(min_value=1, max_value=20)


class InviteForm(forms.Form):
    username = forms.CharField(max_length=150)
    email = forms.EmailField(required=False)


class PresetForm(forms.Form):
    preset = forms.ChoiceField(choices=list(adjudication.PRESETS.items()))


class DecideForm(forms.Form):
    pool_document = forms.IntegerField()
    grade = forms.IntegerField()
    note = forms.CharField(max_length=300, required=False)


class PublishForm(forms.Form):
    """What to publish; the preview page shows what it changes, and confirms with the plan's digest."""

    mode = forms.ChoiceField(
        choices=list(references.PUBLISH_MODES.items()),
        initial="merge",
        required=False,  # merge when not given: it never drops a judgment
        widget=forms.RadioSelect,
    )
    base = forms.TypedChoiceField(
        coerce=int,
        required=False,
        empty_value=None,
        label="Version to merge into",
        help_text="Merging only; default the latest version",
    )
    note = forms.CharField(max_length=300, required=False)
    allow_pending = forms.BooleanField(required=False, label="Publish even with undecided disagreements")
    digest = forms.CharField(max_length=64, required=False, widget=forms.HiddenInput)

    def __init__(self, *args, study, **kwargs):
        super().__init__(*args, **kwargs)
        numbers = study.reference_versions.order_by("-number").values_list("number", flat=True)
        self.fields["base"].choices = [("", "the latest")] + [(n, f"v{n}") for n in numbers]

    def plan_arguments(self) -> dict:
        data = self.cleaned_data
        mode = data["mode"] or "merge"
        base = data["base"] if mode == "merge" else None
        return {"mode": mode, "base_number": base, "allow_pending": data["allow_pending"]}


def _form_errors(request, form):
    for name, errors in form.errors.items():
        messages.error(request, f"{name}: {' '.join(errors)}")


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
        studies = selectors.studies_visible_to(request.user).order_by("-created_at")
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
    study = study_for_researcher(request, slug)
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
            prefix="plan", initial={"assessors_per_document": plan.assessors_per_document if plan else 1}
        ),
        "invite_form": InviteForm(prefix="invite"),
        "invitations": study.assessor_invitations.exclude(status=AssessorInvitation.Status.ACCEPTED)
        .select_related("user")
        .order_by("-invited_at"),
        "preset_form": PresetForm(prefix="adjudicate"),
        "publish_form": PublishForm(prefix="publish", study=study),
        "version_import_form": QrelsUploadForm(prefix="refqrels"),
    }
    return render(request, "assessment/manage.html", context)


@researcher_required
def pool_build(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":
        form = PoolBuildForm(request.POST, prefix="pool")
        if form.is_valid():
            changes = pools.pool_build(
                study=study, rule=form.cleaned_data["rule"], top_x=form.cleaned_data["top_x"]
            )
            summary = "; ".join(
                f"{code}: +{c.added} −{c.removed}"
                + (f" ({c.kept_judged} kept, already judged)" if c.kept_judged else "")
                for code, c in changes.items()
            )
            messages.success(request, f"Pools built. {summary}")
        else:
            _form_errors(request, form)
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
        form = PoolAddForm(request.POST, prefix="add")
        if form.is_valid():
            scenario = study.scenarios.filter(code=form.cleaned_data["scenario"].strip()).first()
            if scenario is None:
                messages.error(request, f"No scenario {form.cleaned_data['scenario']!r} in this study.")
            else:
                try:
                    added = pools.pool_add_documents(
                        scenario=scenario,
                        external_ids=form.cleaned_data["external_ids"].split(),
                        added_by=request.user,
                    )
                    messages.success(request, f"{added} documents added to the pool of {scenario.code}.")
                except AssessmentError as exc:
                    messages.error(request, str(exc))
        else:
            _form_errors(request, form)
    return _manage(study)


@researcher_required
def pool_import(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":
        form = QrelsUploadForm(request.POST, request.FILES, prefix="poolqrels")
        if form.is_valid():
            upload = form.cleaned_data["qrels"]
            try:
                added = pools.pool_import_qrels(
                    study=study, lines=_uploaded_lines(upload), path=upload.name, added_by=request.user
                )
                messages.success(request, f"{added} documents from {upload.name} added to the pools.")
            except (InputError, AssessmentError) as exc:
                messages.error(request, f"Nothing imported: {exc}")
        else:
            _form_errors(request, form)
    return _manage(study)


@researcher_required
def plan_set(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":
        form = PlanForm(request.POST, prefix="plan")
        if form.is_valid():
            plan = assessors.assessment_plan_set(study=study, **form.cleaned_data)
            messages.success(
                request, f"Each document is judged by {plan.assessors_per_document} assessor(s)."
            )
        else:
            _form_errors(request, form)
    return _manage(study)


@researcher_required
def assessor_invite(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":
        form = InviteForm(request.POST, prefix="invite")
        if form.is_valid():
            try:
                membership, password = assessors.assessor_invite(
                    study=study, invited_by=request.user, **form.cleaned_data
                )
                login = request.build_absolute_uri(reverse("login") + "?next=" + reverse("assessment:home"))
                if isinstance(membership, AssessorInvitation):
                    messages.success(
                        request,
                        f"{membership.user.username} assesses for another lab: they are asked to accept "
                        f"on their assessor page ({login}) before they see this study.",
                    )
                elif password:
                    messages.success(
                        request,
                        f"Assessor {membership.user.username} created. Their one-time password: {password} "
                        f"(shown once). They log in at {login}",
                    )
                else:
                    messages.success(
                        request, f"{membership.user.username} now assesses this study ({login})."
                    )
            except AssessmentError as exc:
                messages.error(request, str(exc))
        else:
            _form_errors(request, form)
    return _manage(study)


@researcher_required
def agreement(request, slug):
    study = study_for_researcher(request, slug)
    version = None
    if request.GET.get("version"):
        version = get_object_or_404(study.reference_versions, number=request.GET["version"])
    reference, per_participant, per_scenario = adjudication.participant_reference_agreement(
        study=study, version=version
    )
    context = {
        "study": study,
        "blocks": adjudication.assessor_agreement(study=study),
        "grade_levels": study.grade_levels.all(),
        "reference": reference,
        "versions": study.reference_versions.order_by("-number"),
        "per_participant": per_participant,
        "per_scenario": per_scenario,
    }
    return render(request, "assessment/agreement.html", context)


@researcher_required
def disagreements(request, slug):
    study = study_for_researcher(request, slug)
    context = {
        "study": study,
        "rows": assessment_selectors.disagreements(study=study),
        "grade_levels": study.grade_levels.all(),
        "preset_form": PresetForm(prefix="adjudicate"),
    }
    return render(request, "assessment/disagreements.html", context)


@researcher_required
def adjudicate(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":
        form = PresetForm(request.POST, prefix="adjudicate")
        if form.is_valid():
            result = adjudication.adjudicate(
                study=study, preset=form.cleaned_data["preset"], decided_by=request.user
            )
            decided = ", ".join(f"{n} {method}" for method, n in sorted(result.decided.items())) or "none"
            messages.success(
                request,
                f"Decided: {decided}. For you to decide: {len(result.to_researcher)}. "
                f"Kept by hand: {result.kept_by_hand}. Awaiting judgments: {result.awaiting_judgments}.",
            )
            return redirect("assessment:disagreements", slug=study.slug)
        _form_errors(request, form)
    return _manage(study)


@researcher_required
def decide(request, slug):
    study = study_for_researcher(request, slug)
    if request.method == "POST":
        form = DecideForm(request.POST)
        if form.is_valid():
            pool_document = get_object_or_404(
                PoolDocument.objects.select_related("pool__scenario__study", "document"),
                pk=form.cleaned_data["pool_document"],
                pool__scenario__study=study,
            )
            try:
                adjudication.adjudication_decide(
                    pool_document=pool_document,
                    grade=form.cleaned_data["grade"],
                    decided_by=request.user,
                    note=form.cleaned_data["note"],
                )
                messages.success(request, f"{pool_document.document}: grade {form.cleaned_data['grade']}.")
            except AssessmentError as exc:
                messages.error(request, str(exc))
        else:
            _form_errors(request, form)
    return redirect("assessment:disagreements", slug=study.slug)


def _publish_query(study, form) -> str:
    """The preview's address for the choices of a bound PublishForm (the digest left out)."""
    fields = {name: value for name, value in form.data.items() if name.startswith("publish-")}
    fields.pop("publish-digest", None)
    return reverse("assessment:publish", args=[study.slug]) + "?" + urlencode(fields)


@researcher_required
def publish(request, slug):
    """GET: the preview of a publication (what changes, per topic); POST from the preview: publish it. A POST
    without the preview's digest goes to the preview first, so nothing is published unseen."""
    study = study_for_researcher(request, slug)
    data = request.POST if request.method == "POST" else request.GET
    form = PublishForm(data, prefix="publish", study=study)
    if not form.is_valid():
        _form_errors(request, form)
        return _manage(study)
    if request.method == "POST" and form.cleaned_data["digest"]:
        try:
            version = references.reference_version_publish(
                study=study,
                created_by=request.user,
                note=form.cleaned_data["note"],
                expected_digest=form.cleaned_data["digest"],
                **form.plan_arguments(),
            )
        except AssessmentError as exc:
            messages.error(request, str(exc))
            return redirect(_publish_query(study, form))
        messages.success(
            request,
            f"Reference version {version.number} published ({version.judgments.count()} judgments).",
        )
        return _manage(study)
    if request.method == "POST":
        return redirect(_publish_query(study, form))
    try:
        plan = references.reference_version_publish_plan(study=study, **form.plan_arguments())
    except AssessmentError as exc:
        messages.error(request, str(exc))
        return _manage(study)
    confirm = PublishForm(initial={**form.cleaned_data, "digest": plan.digest}, prefix="publish", study=study)
    for name in ("mode", "base", "allow_pending"):
        confirm.fields[name].widget = forms.HiddenInput()
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
        form = QrelsUploadForm(request.POST, request.FILES, prefix="refqrels")
        if form.is_valid():
            upload = form.cleaned_data["qrels"]
            try:
                version = references.reference_version_import_qrels(
                    study=study,
                    lines=_uploaded_lines(upload),
                    path=upload.name,
                    created_by=request.user,
                    note=form.cleaned_data["note"],
                )
                judgments, topics = assessment_selectors.reference_version_other_topics(version=version)
                others = (
                    f" {judgments} judgments of {topics} topics that are not scenarios were kept; they score nothing."
                    if judgments
                    else ""
                )
                messages.success(
                    request, f"Reference version {version.number} imported from {upload.name}.{others}"
                )
            except (InputError, AssessmentError) as exc:
                messages.error(request, f"Nothing imported: {exc}")
        else:
            _form_errors(request, form)
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
    for scenario in membership.study.scenarios.order_by("id"):
        queue = assessment_selectors.assessor_queue(membership=membership, scenario=scenario)
        rows.append((scenario, len(queue), sum(pd.id in judged for pd in queue)))
    return render(request, "assessment/assessor_study.html", {"study": membership.study, "rows": rows})


def _posted_grade(request) -> int:
    try:
        return int(request.POST.get("grade", ""))
    except ValueError:
        raise AssessmentError(
            f"the grade must be a whole number, not {request.POST.get('grade', '')[:20]!r}"
        ) from None


@assessor_required
def assessor_form(request, membership, code):
    study = membership.study
    scenario = get_object_or_404(study.scenarios, code=code)
    queue = assessment_selectors.assessor_queue(membership=membership, scenario=scenario)
    grades = dict(
        membership.user.assessor_judgments.filter(pool_document__in=queue).values_list(
            "pool_document_id", "grade"
        )
    )
    here = reverse("assessment:assessor_form", args=[study.slug, scenario.code])
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
    }
    if position is not None:
        current = queue[position]
        context.update(
            {
                "current": current,
                "document": current.document,
                "position": position + 1,
                "current_grade": grades.get(current.id),
                "previous": queue[position - 1] if position > 0 else None,
                "next": queue[position + 1] if position + 1 < len(queue) else None,
            }
        )
    return render(request, "assessment/assessor_form.html", context)
