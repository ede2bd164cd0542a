"""Studies and their design: the study, its grade scale, collections, scenarios and systems."""

from __future__ import annotations

from rest_framework import serializers

from studies.assessment.exclusion import EXCLUSION_MEASURES
from studies.design.forms import MAX_TIME_LIMIT_MINUTES, system_config_error
from studies.models import (
    DEFAULT_GRADE_LABELS,
    Collection,
    GradeLevel,
    Scenario,
    Study,
    System,
)
from studies.population import Population, PopulationError
from studies.questionnaires.items import questionnaire_errors
from studies.search.generative_keys import key_still_bound


class GradeLevelSerializer(serializers.ModelSerializer):
    class Meta:
        model = GradeLevel
        fields = ["value", "label"]


class StudySerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    grade_levels = GradeLevelSerializer(many=True, read_only=True)

    class Meta:
        model = Study
        fields = [
            "id",
            "name",
            "slug",
            "description",
            "owner",
            "collection",
            "consent_text",
            "consent_version",
            "questionnaire",
            "pre_task_questionnaire",
            "post_task_questionnaire",
            "time_limit_minutes",
            "design",
            "design_locked_at",
            "created_at",
            "grade_levels",
            "status",
            "status_changed_at",
            "exclusion_min_agreement",
            "exclusion_measure",
            "exclusion_min_documents",
            "analysis_population",
        ]
        # status: read here, changed by POST .../status/ (StudyStatusSerializer) or the study page, both
        # through studies/design/lifecycle.py, which keeps its rules.
        read_only_fields = [
            "slug",
            "collection",
            "design",  # chosen on the set-up pages (services.study_design_set keeps the lock)
            "design_locked_at",
            "created_at",
            "status",
            "status_changed_at",
        ]
        # The page's form's bounds (studies/design/forms.py); the model alone allowed 0 and past a
        # timedelta's range.
        extra_kwargs = {"time_limit_minutes": {"min_value": 1, "max_value": MAX_TIME_LIMIT_MINUTES}}

    # The exclusion rule on agreement with the reference (docs/recruitment.md, "Checks"): null turns it off.
    exclusion_min_agreement = serializers.FloatField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=1,
        help_text="Participants whose agreement with the reference is below this (0 to 1) are marked "
        "excluded; null: no rule.",
    )
    exclusion_measure = serializers.ChoiceField(
        choices=list(EXCLUSION_MEASURES),
        required=False,
        allow_null=True,
        help_text="The agreement the rule reads: kappa_linear (null reads as this), kappa_quadratic "
        "or percent.",
    )
    exclusion_min_documents = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=100000,
        help_text="The least number of documents in common with the reference before the rule applies "
        "(null reads as 5).",
    )

    analysis_population = serializers.CharField(
        required=False,
        allow_null=True,
        max_length=200,
        help_text="Whose sessions the dashboards, statistics, planning and exports count by default: "
        "completers, itt (intention to treat), or either with leave-outs after a colon, e.g. "
        "itt:excluded,timed_out (docs/dashboards.md, Populations); null reads as itt:excluded.",
    )

    def validate_analysis_population(self, value):
        if value is None or not value.strip():
            return None
        try:
            return Population.parse(value).code()
        except PopulationError as exc:
            raise serializers.ValidationError(str(exc)) from None

    # A malformed questionnaire, once stored, broke every participant's questionnaire page (a 500).
    def validate_questionnaire(self, value):
        return _questionnaire(value)

    def validate_post_task_questionnaire(self, value):
        return _questionnaire(value)

    def validate_pre_task_questionnaire(self, value):
        return _questionnaire(value)


def _questionnaire(value):
    errors = questionnaire_errors(value)
    if errors:
        raise serializers.ValidationError(errors)
    return value


class CollectionSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(
        source="owner.username",
        read_only=True,
        default=None,
        allow_null=True,
        help_text="Null: admin only (a superuser gives it an owner).",
    )
    shared_with = serializers.SerializerMethodField(
        help_text="The researchers it is shared with: shown to its owner (and superusers) only, else null."
    )
    document_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Collection
        fields = ["id", "name", "description", "owner", "shared_with", "document_count", "created_at"]

    def get_shared_with(self, collection) -> list[str] | None:
        user = self.context["request"].user
        if user.is_superuser or collection.owner_id == user.pk:
            return sorted(member.username for member in collection.shared_with.all())
        return None


class CollectionShareSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150, help_text="A researcher account's user name.")


class VisibleCollectionField(serializers.PrimaryKeyRelatedField):
    """A collection id among those the caller may use (own, shared, or any for a superuser): another lab's id
    gets the same "does not exist" as an unknown one. (`queryset` names the model for the schema only.)"""

    def get_queryset(self):
        from studies.design.selectors import collections_visible_to

        request = self.context.get("request")
        return collections_visible_to(request.user) if request is not None else Collection.objects.none()


class StudyCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    grade_labels = serializers.ListField(
        child=serializers.CharField(max_length=80),
        required=False,
        default=list(DEFAULT_GRADE_LABELS),
        help_text="Labels of grades 0, 1, 2, ... (2 to 10 of them).",
    )
    consent_text = serializers.CharField(required=False, allow_blank=True, default="")
    consent_version = serializers.CharField(required=False, max_length=40, default="1")
    collection = VisibleCollectionField(
        queryset=Collection.objects.all(), required=False, allow_null=True, default=None
    )
    time_limit_minutes = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=MAX_TIME_LIMIT_MINUTES, default=None
    )


class ScenarioSerializer(serializers.ModelSerializer):
    class Meta:
        model = Scenario
        fields = ["id", "code", "title", "text", "topic_id", "practice"]


class SystemSerializer(serializers.ModelSerializer):
    # A generative system's key (docs/generative-systems.md): written, never read back; `api_key_set` says
    # whether one is stored for the endpoint as it is.
    api_key = serializers.CharField(write_only=True, required=False, allow_blank=True, max_length=4000)
    clear_api_key = serializers.BooleanField(write_only=True, required=False, default=False)
    api_key_set = serializers.SerializerMethodField()

    class Meta:
        model = System
        fields = ["id", "code", "name", "backend", "config", "api_key", "clear_api_key", "api_key_set"]

    def get_api_key_set(self, system) -> bool:
        return key_still_bound(system.api_key_encrypted, (system.config or {}).get("endpoint_url", ""))

    def validate(self, attrs):
        backend = attrs.get("backend", self.instance.backend if self.instance else System.Backend.BUILTIN)
        config = attrs.get("config", self.instance.config if self.instance else {})
        error = system_config_error(backend, config)
        if error:
            raise serializers.ValidationError({"config": error})
        return attrs


class StudyStatusSerializer(serializers.Serializer):
    """POST .../status/: where to move the study (studies/design/lifecycle.py: a draft opens once its set-up
    checklist passes; open, paused and closed as on the study page)."""

    status = serializers.ChoiceField(choices=["open", "paused", "closed"])
