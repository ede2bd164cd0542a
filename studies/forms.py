from django import forms

from .models import DEFAULT_GRADE_LABELS, System


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
    time_limit_minutes = forms.IntegerField(min_value=1, required=False, help_text="Optional, per scenario.")

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


class EnrolForm(forms.Form):
    count = forms.IntegerField(min_value=1, max_value=10000, label="Participants to enrol")
