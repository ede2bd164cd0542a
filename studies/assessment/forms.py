"""The forms of the assessment pages (studies/assessment/views.py)."""

from typing import cast

from django import forms

from studies.assessment.adjudication import PRESETS
from studies.assessment.exclusion import DEFAULT_MIN_DOCUMENTS, EXCLUSION_MEASURES
from studies.assessment.machine import MACHINE_RULES
from studies.assessment.pools import DEFAULT_TOP_X
from studies.assessment.references import PUBLISH_MODES
from studies.models import AssessmentPool, StudyAssessor


class PoolBuildForm(forms.Form):
    rule = forms.ChoiceField(choices=AssessmentPool.Rule.choices)
    top_x = forms.IntegerField(min_value=1, max_value=1000, initial=DEFAULT_TOP_X, label="X")


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
    double_judged_percent = forms.IntegerField(
        min_value=0,
        max_value=100,
        required=False,
        label="Double-judged share (%)",
        help_text="With one assessor per document: this share of each scenario's documents gets a second "
        "assessor, for agreement. Empty: 0.",
    )
    highlight_participant_queries = forms.BooleanField(
        required=False, label="Highlight the participants' queries too (not only the topic's words)"
    )

    def clean_double_judged_percent(self) -> int:
        return self.cleaned_data["double_judged_percent"] or 0


class AssessorScenariosForm(forms.Form):
    """The scenarios one assessor judges; none ticked: all of them."""

    assessor = forms.IntegerField(widget=forms.HiddenInput)
    scenarios = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)

    def __init__(self, *args, scenario_codes: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        scenarios = cast(forms.MultipleChoiceField, self.fields["scenarios"])
        scenarios.choices = [(code, code) for code in scenario_codes]


class GuidelinesForm(forms.Form):
    """The study's guidelines (scenario empty) or one scenario's; the text is kept exactly as written."""

    scenario = forms.CharField(max_length=40, required=False, widget=forms.HiddenInput)
    text = forms.CharField(
        required=False,
        strip=False,
        max_length=20000,
        widget=forms.Textarea(attrs={"rows": 4}),
        label="Guidelines",
    )


class InviteForm(forms.Form):
    username = forms.CharField(
        max_length=150,
        label="Assessor's user name",
        help_text=(
            "A new name makes an assessor account and shows its one-time password once (they change it "
            "under “Change password”); an existing assessor is added, and one of another lab is asked to "
            "accept first. "
            '<a href="/docs/assessing/#assessors" target="_blank" rel="noopener">How assessors work</a>'
        ),
    )
    email = forms.EmailField(required=False, label="E-mail address (optional)")


class PresetForm(forms.Form):
    preset = forms.ChoiceField(choices=list(PRESETS.items()))


class DecideForm(forms.Form):
    pool_document = forms.IntegerField()
    grade = forms.IntegerField()
    note = forms.CharField(max_length=300, required=False)


class PublishForm(forms.Form):
    """What to publish; the preview page shows what it changes, and confirms with the plan's digest."""

    mode = forms.ChoiceField(
        choices=list(PUBLISH_MODES.items()),
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
    # A machine assessor's grades enter only by a rule ticked here; none ticked, none enter.
    rules = forms.MultipleChoiceField(
        choices=list(MACHINE_RULES.items()),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Machine assessor's grades (none ticked: they never enter)",
    )
    machine: forms.ModelChoiceField = forms.ModelChoiceField(
        queryset=StudyAssessor.objects.none(),
        required=False,
        label="Machine assessor the rules take grades from",
        empty_label="none",
    )
    digest = forms.CharField(max_length=64, required=False, widget=forms.HiddenInput)

    def __init__(self, *args, study, **kwargs):
        super().__init__(*args, **kwargs)
        numbers = study.reference_versions.order_by("-number").values_list("number", flat=True)
        self.fields["base"].choices = [("", "the latest")] + [(n, f"v{n}") for n in numbers]
        machines = study.assessors.filter(llm__isnull=False).select_related("user", "llm")
        self.fields["machine"].queryset = machines
        self.fields["machine"].label_from_instance = lambda member: member.user.get_username()
        if not machines.exists() and not self.is_bound:  # nothing to choose: the fields would only puzzle
            del self.fields["rules"], self.fields["machine"]

    def clean(self):
        data = super().clean()
        if data.get("rules") and not data.get("machine"):
            self.add_error("machine", "choose the machine assessor whose grades the ticked rules take")
        return data

    def plan_arguments(self) -> dict:
        data = self.cleaned_data
        mode = data["mode"] or "merge"
        base = data["base"] if mode == "merge" else None
        return {
            "mode": mode,
            "base_number": base,
            "allow_pending": data["allow_pending"],
            "machine": data.get("machine"),
            "rules": data.get("rules") or [],
        }


class GradeForm(forms.Form):
    """An assessor's grade as posted: a whole number (whether the study's scale has it is the service's)."""

    grade = forms.RegexField(regex=r"^[+-]?\d+$")


class ExclusionRuleForm(forms.Form):
    """The study's exclusion rule on agreement with the reference (docs/recruitment.md, "Checks")."""

    exclusion_min_agreement = forms.FloatField(
        min_value=0,
        max_value=1,
        required=False,
        label="Exclude participants whose agreement is below",
        help_text="0 to 1; empty: no rule.",
    )
    exclusion_measure = forms.ChoiceField(choices=list(EXCLUSION_MEASURES.items()), label="Measure")
    exclusion_min_documents = forms.IntegerField(
        min_value=1,
        max_value=100000,
        required=False,
        label="Least documents in common",
        help_text=f"Empty: {DEFAULT_MIN_DOCUMENTS}.",
    )
