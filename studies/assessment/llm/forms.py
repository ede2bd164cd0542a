"""The forms of the LLM assessor's pages (studies/assessment/llm_views.py)."""

from django import forms
from django.core.validators import MaxLengthValidator, MaxValueValidator, MinValueValidator

from studies.assessment.llm.limits import RANGES, prompt_template_max_chars
from studies.assessment.llm.prompts import PLACEHOLDERS, UMBRELA_PROMPT
from studies.models import Scenario


def price_field(label: str) -> forms.DecimalField:
    return forms.DecimalField(label=label, max_digits=12, decimal_places=6, min_value=0, required=False)


class LLMAssessorForm(forms.Form):
    endpoint_url = forms.URLField(
        max_length=500,
        label="Endpoint",
        help_text="The OpenAI-compatible base URL; requests go to it + /chat/completions. "
        "Ollama: http://127.0.0.1:11434/v1; vLLM: http://127.0.0.1:8000/v1. No query (?) or fragment (#).",
        assume_scheme="http",
    )
    model_name = forms.CharField(max_length=200, label="Model", help_text="e.g. llama3.1:8b")
    # Never rendered with a value: the page says only whether a key is set.
    api_key = forms.CharField(
        max_length=4000,
        required=False,
        label="API key",
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Stored encrypted and never shown again. Leave empty to keep the key as it is; "
        "changing the endpoint (scheme, host, port or path) clears it unless you enter it again here.",
    )
    clear_api_key = forms.BooleanField(required=False, label="Remove the stored key")
    prompt_template = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 14, "cols": 100}),
        initial=UMBRELA_PROMPT,
        label="Prompt",
        help_text="Placeholders: "
        + ", ".join("{" + name + "}" for name in PLACEHOLDERS)
        + ". The answer must "
        'end "##final score: N" with N from 0 to 3. Default: UMBRELA\'s prompt.',
        strip=False,
    )
    passage_max_chars = forms.IntegerField(initial=4000, label="Passage length")
    requests_per_minute = forms.IntegerField(initial=60)
    max_retries = forms.IntegerField(initial=3, label="Retries")
    timeout_seconds = forms.IntegerField(initial=60, label="Timeout (s)")
    max_answer_tokens = forms.IntegerField(initial=200)
    temperature = forms.FloatField(initial=0.0)
    price_input_per_million = price_field("Price per million input tokens")
    price_output_per_million = price_field("Price per million output tokens")
    cost_cap = price_field("Cost cap (in the prices' currency)")
    # At most the database's bigint: beyond it a save would fail, not refuse.
    token_cap = forms.IntegerField(
        min_value=1, max_value=2**63 - 1, required=False, label="Token cap (input + output)"
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The bounds are the service's (limits.py); set here so that the page shows and checks them too.
        for name, (least, most) in RANGES.items():
            field = self.fields[name]
            field.min_value, field.max_value = least, most
            field.validators += [MinValueValidator(least), MaxValueValidator(most)]
            field.widget.attrs.update(min=least, max=most)
        template = self.fields["prompt_template"]
        template.max_length = prompt_template_max_chars()
        template.validators.append(MaxLengthValidator(template.max_length))
        template.widget.attrs["maxlength"] = template.max_length

    def clean_prompt_template(self):
        # A browser posts a textarea's lines ending CRLF: kept so, UMBRELA's default sent from the page had
        # another prompt hash than the same default set by the API, and the model read "\r\n".
        return self.cleaned_data["prompt_template"].replace("\r\n", "\n")


class LLMRunForm(forms.Form):
    scenarios = forms.ModelMultipleChoiceField(
        queryset=Scenario.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: every scenario.",
    )

    def __init__(self, *args, study, **kwargs):
        super().__init__(*args, **kwargs)
        # A practice task is never scored, so never sent to the model.
        self.fields["scenarios"].queryset = study.scenarios.filter(practice=False).order_by("id")


class LLMAuditForm(forms.Form):
    seed = forms.IntegerField(
        min_value=0,
        max_value=2**31 - 1,
        initial=42,
        help_text="The same seed makes the same variants and the same bootstrap intervals.",
    )
