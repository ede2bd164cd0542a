"""The assessment page's forms for assessor work: the scenarios each assessor judges and the
guidelines. Thin views like studies/assessment/views.py: an access-checked fetch, a form, a service of
studies/assessment/assessor_work.py through form_post, a redirect to the assessment page."""

from django.shortcuts import get_object_or_404, redirect

from sessionlab.form_pages import form_post
from studies.accounts.access import researcher_required, study_for_researcher
from studies.assessment import assessor_work
from studies.assessment.assessor_figures import assessor_figures
from studies.assessment.forms import AssessorScenariosForm, GuidelinesForm
from studies.errors import AssessmentError, StudiesError


def _codes(study) -> list[str]:
    # The scored scenarios: a practice task's documents are not assessed.
    return list(study.scenarios.filter(practice=False).order_by("id").values_list("code", flat=True))


def plan_text(plan) -> str:
    """The plan form's answer: k, and the double-judged share when it applies (k = 1)."""
    share = plan.double_judged_percent if plan.assessors_per_document == 1 else 0
    double = f", {share}% of them by two" if share else ""
    return f"Each document is judged by {plan.assessors_per_document} assessor(s){double}."


def _manage(study, anchor: str):
    response = redirect("assessment:manage", slug=study.slug)
    response["Location"] += anchor
    return response


@researcher_required
def assessor_scenarios(request, slug):
    study = study_for_researcher(request, slug)
    if request.method != "POST":
        return _manage(study, "#assessors")

    def choose(data):
        membership = get_object_or_404(study.assessors.select_related("user"), pk=data["assessor"])
        chosen = assessor_work.assessor_scenarios_set(
            membership=membership, scenario_codes=data["scenarios"], by=request.user
        )
        judged = ", ".join(scenario.code for scenario in chosen) or "every scenario"
        return f"{membership.user.username} judges {judged}; unjudged work was dealt again."

    return form_post(
        request,
        AssessorScenariosForm(request.POST, scenario_codes=_codes(study)),
        choose,
        refusals=(StudiesError,),
        success=lambda text: text,
        redirect_to=_manage(study, "#assessors"),
    )


@researcher_required
def guidelines(request, slug):
    study = study_for_researcher(request, slug)
    if request.method != "POST":
        return _manage(study, "#guidelines")

    def save(data):
        scenario = None
        if data["scenario"]:
            scenario = study.scenarios.filter(code=data["scenario"]).first()
            if scenario is None:
                raise AssessmentError(f"no scenario {data['scenario']!r} in this study")
        assessor_work.guidelines_set(study=study, scenario=scenario, text=data["text"], by=request.user)
        return f"Guidelines for {scenario.code if scenario else 'the whole study'} saved."

    return form_post(
        request,
        GuidelinesForm(request.POST),
        save,
        refusals=(StudiesError,),
        success=lambda text: text,
        redirect_to=_manage(study, "#guidelines"),
    )


def manage_context(study) -> dict:
    """What the assessment page shows of assessor work: a scenarios form per person assessor, a guidelines
    form for the study and each scenario, the scenarios no assessor judges, every assessor's figures."""
    texts = assessor_work.guidelines_texts(study=study)
    codes = _codes(study)
    scenario_forms = [
        (
            row,
            AssessorScenariosForm(
                initial={"assessor": row.membership.pk, "scenarios": row.codes},
                scenario_codes=codes,
                auto_id=f"id_assessor_{row.membership.pk}_%s",
            ),
        )
        for row in assessor_work.assessor_scenario_choices(study=study)
    ]
    targets = [("The whole study", None, "")] + [
        (f"{s.code}: {s.title}", s.id, s.code) for s in study.scenarios.order_by("id")
    ]
    guidelines_forms = [
        (
            label,
            GuidelinesForm(
                initial={"scenario": code, "text": texts.get(scenario_id, "")},
                auto_id=f"id_guidelines_{code or 'study'}_%s",
            ),
        )
        for label, scenario_id, code in targets
    ]
    return {
        "scenario_forms": scenario_forms,
        "guidelines_forms": guidelines_forms,
        "unassessed_scenarios": assessor_work.scenarios_without_assessor(study=study),
        "figures": assessor_figures(study=study),
    }
