from django import forms

from studies.design.selectors import collections_visible_to
from studies.models import DEFAULT_GRADE_LABELS, Collection, System
from studies.search.systems import system_config_problem

# A scenario's time limit: up to a week (a larger one overflowed the deadline's arithmetic: a 500).
MAX_TIME_LIMIT_MINUTES = 7 * 24 * 60


def system_config_error(backend: str, config) -> str | None:
    """Why a system's config cannot work (None: it can); the page's form and the API both ask."""
    return system_config_problem(backend, config)


class StudyForm(forms.Form):
    name = forms.CharField(max_length=200)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)
    grade_labels = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        initial="\n".join(DEFAULT_GRADE_LABELS),
        help_text="One label a line, from grade 0 upwards.",
    )
    consent_text = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), required=False)
    consent_version = forms.CharField(max_length=40, initial="1")
    time_limit_minutes = forms.IntegerField(
        min_value=1, max_value=MAX_TIME_LIMIT_MINUTES, required=False, help_text="Optional, per scenario."
    )
    collection = forms.ModelChoiceField(
        queryset=Collection.objects.none(),
        required=False,
        help_text="Optional: a collection of yours or shared with you (upload one on the Collections page).",
    )

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        # Only collections this researcher may use: another lab's id is "not one of the available choices".
        if user is not None:
            self.fields["collection"].queryset = collections_visible_to(user).order_by("name")

    def clean_grade_labels(self):
        labels = [line.strip() for line in self.cleaned_data["grade_labels"].splitlines() if line.strip()]
        if not 2 <= len(labels) <= 10:
            raise forms.ValidationError("Give between 2 and 10 grade labels, one a line.")
        return labels


class ScenarioForm(forms.Form):
    code = forms.CharField(max_length=40)
    title = forms.CharField(max_length=200)
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), help_text="What the participant reads.")
    topic_id = forms.CharField(max_length=100, help_text="The qrels topic of its reference judgments.")


class SystemForm(forms.Form):
    code = forms.CharField(max_length=40)
    name = forms.CharField(max_length=200)
    backend = forms.ChoiceField(choices=System.Backend.choices)
    config = forms.JSONField(
        required=False,
        initial=dict,
        help_text='builtin: {"configuration": "bm25_title_text"}; http: {"url_template": "https://…?q={query}"}',
    )

    def clean(self):
        cleaned = super().clean()
        if "config" in cleaned and "backend" in cleaned:
            cleaned["config"] = cleaned["config"] or {}
            error = system_config_error(cleaned["backend"], cleaned["config"])
            if error:
                self.add_error("config", error)
        return cleaned


class EnrolForm(forms.Form):
    count = forms.IntegerField(min_value=1, max_value=10000, label="Participants to enrol")
