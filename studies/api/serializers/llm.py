"""LLM assessors: the assessor as read back (never its key: `key_set` says whether one is
stored), the settings a create or change accepts, its runs and their kept requests, and a publication of
the adjudicated grades with machine rules.

The settings' rules have one home, the page's form (studies/assessment/llm/forms.py) and the set-up service
(studies/assessment/llm/setup.py): `LLMAssessorWriteSerializer` only types the JSON and runs that form over
it, so a value the page refuses is refused here, with the form's message on the field."""

from __future__ import annotations

from rest_framework import serializers

from studies.assessment.llm.forms import LLMAssessorForm
from studies.assessment.llm.setup import EDITABLE, SETTINGS
from studies.assessment.machine import MACHINE_RULES
from studies.assessment.references import PUBLISH_MODES
from studies.models import LLMAssessor, LLMRequest, LLMRun


class LLMAssessorSerializer(serializers.ModelSerializer):
    assessor_id = serializers.IntegerField(
        source="membership_id", read_only=True, help_text="Its StudyAssessor membership (provenance's id)."
    )
    username = serializers.CharField(source="membership.user.username", read_only=True)
    key_set = serializers.BooleanField(
        source="has_api_key",
        read_only=True,
        help_text="Whether an API key is stored; the key is never shown.",
    )
    grade_map = serializers.DictField(
        child=serializers.IntegerField(),
        read_only=True,
        help_text="The model's grade (0-3) -> the study's grade; follows the study's scale.",
    )
    created_by = serializers.CharField(source="created_by.username", read_only=True, default=None)

    class Meta:
        model = LLMAssessor
        fields = [
            "id",
            "assessor_id",
            "username",
            "endpoint_url",
            "model_name",
            "key_set",
            *SETTINGS,
            "grade_map",
            "created_by",
            "created_at",
        ]
        read_only_fields = fields


def _price(help_text: str) -> serializers.DecimalField:
    return serializers.DecimalField(
        max_digits=12, decimal_places=6, required=False, allow_null=True, help_text=help_text
    )


class LLMAssessorWriteSerializer(serializers.Serializer):
    """A create (endpoint_url and model_name required; every other setting takes the page's default) or a
    change (PATCH: only what is sent changes). `api_key`: a key stores it (encrypted), "" clears the stored
    key, null or absent keeps it, except when endpoint_url moves (scheme, host, port or path): the stored
    key is then cleared unless a new one comes in the same request."""

    endpoint_url = serializers.CharField(
        help_text="The OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1"
    )
    model_name = serializers.CharField(help_text="The model the endpoint serves, e.g. llama3.1:8b")
    api_key = serializers.CharField(
        write_only=True,
        required=False,
        allow_null=True,
        allow_blank=True,
        trim_whitespace=True,
        style={"input_type": "password"},
        help_text='Write-only: a key replaces the stored one, "" clears it, null or absent keeps it '
        "unless endpoint_url changes (scheme, host, port or path): then the stored key is cleared.",
    )
    prompt_template = serializers.CharField(
        required=False,
        allow_blank=True,  # the form's "required" answers "", as on the page
        trim_whitespace=False,
        help_text="The prompt, with {query}, {passage}, {description}, {narrative}; default UMBRELA's.",
    )
    passage_max_chars = serializers.IntegerField(required=False)
    requests_per_minute = serializers.IntegerField(required=False)
    max_retries = serializers.IntegerField(required=False)
    timeout_seconds = serializers.IntegerField(required=False)
    max_answer_tokens = serializers.IntegerField(required=False)
    temperature = serializers.FloatField(required=False)
    price_input_per_million = _price("Price per million input tokens (any currency, the cap's).")
    price_output_per_million = _price("Price per million output tokens.")
    cost_cap = _price("Stop before a request could cross this cost (needs both prices).")
    token_cap = serializers.IntegerField(required=False, allow_null=True, help_text="Input + output tokens.")

    def validate(self, attrs):
        """The page's form over what was sent, on top of the assessor's current settings (a change) or the
        form's defaults (a create): the validated data is the form's cleaned data, ready for the service."""
        instance = self.context.get("assessor")
        if instance is not None:
            current = {name: getattr(instance, name) for name in EDITABLE}
        else:
            current = {name: field.initial for name, field in LLMAssessorForm.base_fields.items()}
        key = attrs.pop("api_key", None)
        data = {**current, **attrs, "api_key": key or "", "clear_api_key": key == ""}
        form = LLMAssessorForm(data=data)
        if not form.is_valid():
            raise serializers.ValidationError({name: list(errors) for name, errors in form.errors.items()})
        return form.cleaned_data


class LLMRunSerializer(serializers.ModelSerializer):
    assessor = serializers.IntegerField(source="assessor_id", read_only=True)
    scenarios = serializers.SerializerMethodField(help_text="The scenarios' codes; empty: every scenario.")
    progress = serializers.SerializerMethodField(help_text="Documents done or failed, of the total (0-1).")
    created_by = serializers.CharField(source="created_by.username", read_only=True, default=None)

    class Meta:
        model = LLMRun
        fields = [
            "id",
            "assessor",
            "status",
            "scenarios",
            "total",
            "done",
            "failed",
            "progress",
            "tokens_in",
            "tokens_out",
            "cost",
            "error",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields

    def get_scenarios(self, run) -> list[str]:
        codes = self.context["scenario_codes"]
        return [codes[pk] for pk in run.scenario_ids if pk in codes]

    def get_progress(self, run) -> float:
        return round((run.done + run.failed) / run.total, 4) if run.total else 0.0


class LLMRunStartSerializer(serializers.Serializer):
    scenarios = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        default=list,
        help_text="Scenario codes; empty or absent: every scenario.",
    )


class LLMRequestSerializer(serializers.ModelSerializer):
    document = serializers.CharField(source="document_external_id", read_only=True)

    class Meta:
        model = LLMRequest
        fields = [
            "id",
            "document",
            "attempt",
            "status",
            "http_status",
            "error",
            "model_name",
            "prompt_hash",
            "messages",
            "raw_answer",
            "model_grade",
            "grade",
            "tokens_in",
            "tokens_out",
            "latency_ms",
            "sent_at",
        ]
        read_only_fields = fields


class PublishSerializer(serializers.Serializer):
    mode = serializers.ChoiceField(choices=list(PUBLISH_MODES.items()), default="merge")
    base = serializers.IntegerField(
        required=False, allow_null=True, help_text="Merging only: the version number (default the latest)."
    )
    allow_pending = serializers.BooleanField(
        default=False, help_text="Publish even while judged disagreements wait for a decision (left out)."
    )
    note = serializers.CharField(required=False, allow_blank=True, max_length=300, default="")
    machine = serializers.IntegerField(
        required=False, allow_null=True, help_text="The LLM assessor (its id) whose grades the rules take."
    )
    rules = serializers.ListField(
        child=serializers.ChoiceField(choices=list(MACHINE_RULES.items())),
        required=False,
        default=list,
        help_text="Machine rules; none: no machine grade enters.",
    )

    def validate(self, attrs):
        if attrs["rules"] and attrs.get("machine") is None:
            raise serializers.ValidationError(
                {"machine": "the rules need the LLM assessor whose grades they take"}
            )
        if attrs["mode"] == "replace" and attrs.get("base") is not None:
            raise serializers.ValidationError({"base": "a replacement merges into no version; leave it out"})
        return attrs
