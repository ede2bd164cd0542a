"""Output serializers (what the API shows) and input serializers (what a write with side effects accepts).

Serializers only shape data: writes that touch several models are services (studies/design/services.py,
studies/assessment/, studies/participation/steps.py), called by the views.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from studies.assessment.exclusion import EXCLUSION_MEASURES
from studies.design.forms import MAX_TIME_LIMIT_MINUTES, system_config_error
from studies.design.questionnaires import questionnaire_errors
from studies.models import (
    DEFAULT_GRADE_LABELS,
    Assignment,
    Collection,
    Event,
    GradeLevel,
    Judgment,
    JudgmentChange,
    Participant,
    Query,
    ReferenceJudgment,
    ReferenceVersion,
    Scenario,
    SearchSession,
    ShownResult,
    Study,
    System,
)

# --- studies and their design ---------------------------------------------------------------------------


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
            "design_locked_at",
            "created_at",
            "grade_levels",
            "status",
            "status_changed_at",
            "exclusion_min_agreement",
            "exclusion_measure",
            "exclusion_min_documents",
        ]
        # status: read here, changed on the study page only (studies/design/lifecycle.py keeps its rules).
        read_only_fields = [
            "slug",
            "collection",
            "design_locked_at",
            "created_at",
            "status",
            "status_changed_at",
        ]
        # The page's form's bounds (studies/design/forms.py); the model alone allowed 0 and past a timedelta's range.
        extra_kwargs = {"time_limit_minutes": {"min_value": 1, "max_value": MAX_TIME_LIMIT_MINUTES}}

    # The exclusion rule on agreement with the reference (docs/recruitment.md, "Checks"): null turns it off.
    exclusion_min_agreement = serializers.FloatField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=1,
        help_text="Participants whose agreement with the reference is below this (0 to 1) are marked excluded; "
        "null: no rule.",
    )
    exclusion_measure = serializers.ChoiceField(
        choices=list(EXCLUSION_MEASURES),
        required=False,
        allow_null=True,
        help_text="The agreement the rule reads: kappa_linear (null reads as this), kappa_quadratic or percent.",
    )
    exclusion_min_documents = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=100000,
        help_text="The least number of documents in common with the reference before the rule applies "
        "(null reads as 5).",
    )

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
        fields = ["id", "code", "title", "text", "topic_id"]


class SystemSerializer(serializers.ModelSerializer):
    class Meta:
        model = System
        fields = ["id", "code", "name", "backend", "config"]

    def validate(self, attrs):
        backend = attrs.get("backend", self.instance.backend if self.instance else System.Backend.BUILTIN)
        config = attrs.get("config", self.instance.config if self.instance else {})
        error = system_config_error(backend, config)
        if error:
            raise serializers.ValidationError({"config": error})
        return attrs


# --- participants ---------------------------------------------------------------------------------------


class AssignmentSerializer(serializers.ModelSerializer):
    scenario = serializers.CharField(source="scenario.code", read_only=True)
    system = serializers.CharField(source="system.code", read_only=True)
    session = serializers.SerializerMethodField()

    class Meta:
        model = Assignment
        fields = [
            "id",
            "position",
            "scenario",
            "scenario_id",
            "system",
            "system_id",
            "retake_of",
            "retake_reason",
            "session",
        ]

    def get_session(self, assignment) -> int | None:
        session = getattr(assignment, "session", None)
        return session.pk if session is not None else None


class ParticipantSerializer(serializers.ModelSerializer):
    assignments = AssignmentSerializer(many=True, read_only=True)
    state = serializers.SerializerMethodField(
        help_text="invited, started, active, completed, returned, timed_out, screened_out or withdrawn "
        "(docs/recruitment.md)."
    )
    plan_row = serializers.SerializerMethodField(
        help_text="The row of the study's balanced plan this participant works (a re-issued row names "
        "the participant who freed it in reissue_of)."
    )

    class Meta:
        model = Participant
        fields = [
            "id",
            "code",
            "access_token",
            "enrolment_index",
            "consent_version",
            "consented_at",
            "declined_at",
            "withdrawn_at",
            "created_at",
            "questionnaire_answers",
            "assignments",
            "state",
            "state_reason",
            "plan_row",
            "reissue_of",
            "panel_status",
            "excluded_at",
            "excluded_reason",
            "excluded_agreement",
        ]
        # excluded_*: the study's agreement rule's mark (studies/assessment/exclusion.py); the sessions stay.
        read_only_fields = [
            "state_reason",
            "reissue_of",
            "panel_status",
            "excluded_at",
            "excluded_reason",
            "excluded_agreement",
        ]

    def get_state(self, participant) -> str:
        return participant.state or "invited"

    def get_plan_row(self, participant) -> int:
        return participant.enrolment_index if participant.plan_row is None else participant.plan_row


class EnrolSerializer(serializers.Serializer):
    count = serializers.IntegerField(min_value=1, max_value=1000)


# --- what participants did ------------------------------------------------------------------------------


class ShownResultSerializer(serializers.ModelSerializer):
    doc = serializers.CharField(source="document.external_id", read_only=True)

    class Meta:
        model = ShownResult
        fields = ["rank", "page", "doc", "title", "snippet", "shown_at"]


class QuerySerializer(serializers.ModelSerializer):
    shown_results = ShownResultSerializer(many=True, read_only=True)

    class Meta:
        model = Query
        fields = [
            "id",
            "session",
            "position",
            "text",
            "issued_at",
            "scan_mark_rank",
            "system_message",
            "shown_results",
        ]


class JudgmentChangeSerializer(serializers.ModelSerializer):
    class Meta:
        model = JudgmentChange
        fields = ["grade", "changed_at"]


class JudgmentSerializer(serializers.ModelSerializer):
    doc = serializers.CharField(source="document.external_id", read_only=True)
    participant = serializers.CharField(source="session.assignment.participant.code", read_only=True)
    history = JudgmentChangeSerializer(many=True, read_only=True)

    class Meta:
        model = Judgment
        fields = ["id", "session", "participant", "doc", "grade", "created_at", "updated_at", "history"]


class SessionSerializer(serializers.ModelSerializer):
    """A session with its design: whose it is, which scenario on which system, at which position."""

    participant = serializers.CharField(source="assignment.participant.code", read_only=True)
    scenario = serializers.CharField(source="assignment.scenario.code", read_only=True)
    system = serializers.CharField(source="assignment.system.code", read_only=True)
    position = serializers.IntegerField(source="assignment.position", read_only=True)
    query_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = SearchSession
        # Times are on the session's timeline: the client's clock + clock_offset_ms (docs/time-model.md).
        fields = [
            "id",
            "participant",
            "scenario",
            "system",
            "position",
            "started_at",
            "ended_at",
            "end_reason",
            "post_task_answers",
            "query_count",
            "clock_offset_ms",
            "clock_delay_ms",
        ]


class SessionDetailSerializer(SessionSerializer):
    queries = QuerySerializer(many=True, read_only=True)
    judgments = JudgmentSerializer(many=True, read_only=True)

    class Meta(SessionSerializer.Meta):
        fields = SessionSerializer.Meta.fields + ["queries", "judgments"]


class EventSerializer(serializers.ModelSerializer):
    participant = serializers.CharField(source="participant.code", read_only=True)
    # selectors.events_readable: null where the stored time is beyond what Python's datetime holds.
    client_time = serializers.DateTimeField(source="readable_client_time", read_only=True, allow_null=True)

    class Meta:
        model = Event
        fields = [
            "id",
            "participant",
            "session",
            "type",
            "client_event_id",
            "sequence",
            "client_time",
            "server_time",
            "payload",
        ]


# --- reference judgments --------------------------------------------------------------------------------


class ReferenceVersionSerializer(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", read_only=True, default=None)
    judgment_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = ReferenceVersion
        fields = ["id", "number", "note", "created_by", "created_at", "judgment_count"]


class ReferenceJudgmentSerializer(serializers.ModelSerializer):
    doc = serializers.CharField(source="document.external_id", read_only=True)

    class Meta:
        model = ReferenceJudgment
        fields = ["id", "topic_id", "doc", "grade", "source"]


class QrelsImportSerializer(serializers.Serializer):
    file = serializers.FileField(required=False, help_text="A TREC qrels file (topic iteration docid grade).")
    text = serializers.CharField(
        required=False, trim_whitespace=False, help_text="The qrels as text, instead of a file."
    )
    note = serializers.CharField(required=False, allow_blank=True, max_length=300, default="")

    def validate(self, attrs):
        if ("file" in attrs) == ("text" in attrs):
            raise serializers.ValidationError("send the qrels either as `file` or as `text`")
        return attrs


# --- the participant's log ingestion --------------------------------------------------------------------


class TaskSerializer(serializers.Serializer):
    """What the participant reads before searching: the scenario's title and text."""

    title = serializers.CharField(read_only=True)
    text = serializers.CharField(read_only=True)


class ParticipantAssignmentSerializer(AssignmentSerializer):
    """An assignment as the participant's own front-end needs it: the task to show and the kind of system."""

    task = TaskSerializer(source="scenario", read_only=True)
    system_kind = serializers.CharField(
        source="system.backend",
        read_only=True,
        help_text="builtin, http, or external (the front-end logs the results it "
        "showed with each query event: docs/api.md).",
    )

    class Meta(AssignmentSerializer.Meta):
        fields = [*AssignmentSerializer.Meta.fields, "task", "system_kind"]


class ParticipantMeSerializer(serializers.ModelSerializer):
    study = serializers.CharField(source="study.slug", read_only=True)
    grade_levels = GradeLevelSerializer(
        source="study.grade_levels",
        many=True,
        read_only=True,
        help_text="The study's grade scale, lowest first: the grades a judgment event may carry.",
    )
    assignments = ParticipantAssignmentSerializer(many=True, read_only=True)

    class Meta:
        model = Participant
        fields = ["code", "study", "consented_at", "withdrawn_at", "grade_levels", "assignments"]


class ClientEventSerializer(serializers.Serializer):
    """One client event, as the built-in interface sends it (docs/api.md lists the types and their data)."""

    id = serializers.CharField(
        help_text="The client's event id: 1..64 letters, digits or _.:- (unique per participant)."
    )
    type = serializers.CharField(
        help_text="query, results_page, document_open, document_close, judgment, scan_mark, "
        "session_end, or any other lower-case name (logged as it came)."
    )
    session = serializers.IntegerField(required=False, allow_null=True)
    seq = serializers.IntegerField(required=False, allow_null=True)
    time = serializers.CharField(
        required=False, allow_null=True, help_text="ISO 8601, or milliseconds since the epoch."
    )
    data = serializers.DictField(required=False)


class RoundTripSerializer(serializers.Serializer):
    sent = serializers.CharField(help_text="When the previous batch left (the client's clock).")
    server_received = serializers.CharField(help_text="From that batch's answer: clock.server_received.")
    server_sent = serializers.CharField(help_text="From that batch's answer: clock.server_sent.")
    received = serializers.CharField(help_text="When that answer arrived (the client's clock).")


class BatchClockSerializer(serializers.Serializer):
    """The client's clock, for the session's offset estimate (docs/time-model.md). Times are ISO 8601 or
    milliseconds since the epoch."""

    sent = serializers.CharField(required=False, help_text="When this batch left (the client's clock).")
    previous = RoundTripSerializer(required=False, help_text="The last round trip the client saw.")


class EventBatchDocSerializer(serializers.Serializer):
    """The documented shape of a batch (the view validates events one by one, as events_ingest does)."""

    events = ClientEventSerializer(many=True)
    clock = BatchClockSerializer(required=False)


class AckSerializer(serializers.Serializer):
    id = serializers.CharField(allow_null=True)
    ok = serializers.BooleanField()
    refused = serializers.CharField(required=False, help_text="Refused for good (stored with its refusal).")
    error = serializers.CharField(
        required=False, help_text="Not storable as sent (not stored): the field and why."
    )
    retry_later = serializers.CharField(required=False, help_text="Not stored yet: send it again later.")
    normalized = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Data paths whose text was cleaned (lone surrogate, NUL).",
    )


class ServerClockSerializer(serializers.Serializer):
    server_received = serializers.DateTimeField(help_text="When the server received the batch.")
    server_sent = serializers.DateTimeField(help_text="When the server answered it.")
    refused = serializers.CharField(
        required=False,
        help_text="Why the batch's clock was no sample (the field); its events are stored all the same.",
    )


class AckBatchSerializer(serializers.Serializer):
    acks = AckSerializer(many=True)
    clock = ServerClockSerializer(required=False, help_text="Only when the batch sent a clock.")


class SessionStartSerializer(serializers.Serializer):
    assignment = serializers.IntegerField(help_text="Position of the assignment in the participant's order.")
    client_event_id = serializers.CharField(max_length=64)
    time = serializers.CharField(
        required=False,
        allow_null=True,
        max_length=100,
        help_text="When the participant started, on their clock (ISO 8601, or "
        "milliseconds since the epoch): the session's start on its timeline "
        "(docs/time-model.md).",
    )


# --- the participant's whole way (consent to the last post-task questions) ------------------------------------


class ConsentTextSerializer(serializers.Serializer):
    text = serializers.CharField(
        read_only=True, help_text="The study's consent text, as the link's page shows it."
    )
    version = serializers.CharField(read_only=True, help_text="Send it back to agree (`consent_version`).")


@extend_schema_field(OpenApiTypes.NUMBER)
class NumberField(serializers.Field):
    """A number as stored: a whole number stays one (a scale from 1, not 1.0)."""

    def to_representation(self, value):
        return value


class QuestionnaireItemSerializer(serializers.Serializer):
    """One question (docs/running-a-study.md): answered under `answers[name]`."""

    name = serializers.CharField(read_only=True)
    label = serializers.CharField(read_only=True)
    kind = serializers.ChoiceField(["integer", "number", "scale", "text", "choice"], read_only=True)
    min = NumberField(read_only=True, allow_null=True, help_text="A number's lowest answer (null: none).")
    max = NumberField(read_only=True, allow_null=True, help_text="A number's highest answer (null: none).")
    choices = serializers.ListField(
        child=serializers.CharField(),
        read_only=True,
        help_text="A choice question's options, the answer one of them (else empty).",
    )
    required = serializers.BooleanField(read_only=True)


class CheckItemSerializer(serializers.Serializer):
    """An attention or comprehension check, never with its answer."""

    name = serializers.CharField(read_only=True, help_text="Send it back as `check`.")
    kind = serializers.ChoiceField(["attention", "comprehension"], read_only=True)
    label = serializers.CharField(read_only=True)
    choices = serializers.ListField(child=serializers.CharField(), read_only=True)


class GoldDocumentSerializer(serializers.Serializer):
    doc = serializers.CharField(
        read_only=True, help_text="The document's id in the collection (`grades` key)."
    )
    title = serializers.CharField(read_only=True, allow_blank=True)
    text = serializers.CharField(read_only=True, allow_blank=True)


class GoldStepSerializer(serializers.Serializer):
    documents = GoldDocumentSerializer(
        many=True, read_only=True, help_text="The task's two documents, in this participant's order."
    )
    grade_levels = GradeLevelSerializer(many=True, read_only=True, help_text="The grades to choose from.")


class CompletionSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(["completed", "screened_out", "failed_checks"], read_only=True)
    code = serializers.CharField(read_only=True, allow_blank=True, help_text="The panel's completion code.")
    redirect_url = serializers.CharField(
        read_only=True,
        allow_blank=True,
        help_text="Where to send the participant (empty: they paste the code).",
    )


STEP_KINDS = [
    "consent",
    "declined",
    "withdrawn",
    "questionnaire",
    "checks",
    "pre_task",
    "scenario",
    "search",
    "gold",
    "post_task",
    "done",
    "no_assignments",
    "ended",
    "paused",
]


class ParticipantStepSerializer(serializers.Serializer):
    """The participant's current step and what a front-end needs to show it (docs/api.md, "The whole way")."""

    kind = serializers.ChoiceField(
        STEP_KINDS,
        read_only=True,
        help_text=(
            "consent, questionnaire, checks, pre_task, scenario (read the task, start its session), search, gold, "
            "post_task: the participant acts; done, declined, withdrawn, ended (returned, timed out, screened out), "
            "paused (the study takes no new step now), no_assignments: nothing to do."
        ),
    )
    message = serializers.CharField(
        read_only=True, allow_blank=True, help_text="For ended and paused: what to tell the participant."
    )
    assignment = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="The position of the task this step is about (1-based)."
    )
    total = serializers.IntegerField(read_only=True, help_text="How many tasks the participant has.")
    session = serializers.IntegerField(
        read_only=True,
        allow_null=True,
        help_text="The task's session id, once started (search, gold, post_task).",
    )
    task = TaskSerializer(read_only=True, allow_null=True)
    system_kind = serializers.CharField(
        read_only=True, allow_null=True, help_text="builtin, http or external."
    )
    deadline = serializers.DateTimeField(
        read_only=True, allow_null=True, help_text="search: when the study's time limit ends the session."
    )
    consent = ConsentTextSerializer(
        read_only=True, allow_null=True, help_text="consent: the text to agree to."
    )
    items = QuestionnaireItemSerializer(
        many=True, read_only=True, help_text="questionnaire, pre_task, post_task: the questions (else empty)."
    )
    check = CheckItemSerializer(
        read_only=True, allow_null=True, help_text="checks: the next check to answer."
    )
    retry = serializers.BooleanField(
        read_only=True, help_text="checks: the last answer to this check was wrong; it may be answered again."
    )
    gold = GoldStepSerializer(read_only=True, allow_null=True, help_text="gold: the two documents to grade.")
    completion = CompletionSerializer(
        read_only=True,
        allow_null=True,
        help_text="done, ended: the completion code a panel participant receives.",
    )


class StepAnswerSerializer(serializers.Serializer):
    ok = serializers.BooleanField(read_only=True)
    step = ParticipantStepSerializer(read_only=True, help_text="The participant's step after this call.")


class ParticipantActionSerializer(serializers.Serializer):
    """What every action of the way carries: its client event id (a re-sent call with the same id is stored
    once and answered the same), and optionally its time and sequence number on the client."""

    client_event_id = serializers.CharField(
        max_length=64, help_text="1..64 letters, digits or _.:- (unique per participant)."
    )
    time = serializers.CharField(
        required=False,
        allow_null=True,
        max_length=100,
        help_text="When the participant acted, on their clock (ISO 8601, or milliseconds since the epoch).",
    )
    seq = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=2**63 - 1,
        help_text="The client's sequence number.",
    )


def _answers_field(what: str):
    return serializers.DictField(
        child=serializers.CharField(allow_blank=True, allow_null=True, max_length=10_000),
        help_text=f"{what}: {{question name: answer}} (text or a number); a question left out is unanswered.",
    )


class ConsentSerializer(ParticipantActionSerializer):
    decision = serializers.ChoiceField(["agree", "decline"])
    consent_version = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=40,
        help_text="To agree: the version of the text shown (step.consent).",
    )

    def validate(self, attrs):
        if attrs["decision"] == "agree" and not attrs.get("consent_version"):
            raise serializers.ValidationError({"consent_version": "the version of the consent text shown"})
        return attrs


class QuestionnaireAnswersSerializer(ParticipantActionSerializer):
    answers = _answers_field("The questionnaire's answers")


class PreTaskAnswersSerializer(ParticipantActionSerializer):
    assignment = serializers.IntegerField(
        min_value=1, max_value=2**31 - 1, help_text="The task's position (step.assignment)."
    )
    answers = _answers_field("The answers to the questions before this task")


class CheckAnswerSerializer(ParticipantActionSerializer):
    check = serializers.CharField(max_length=64, help_text="The check's name (step.check.name).")
    answer = serializers.CharField(max_length=200, allow_blank=True, help_text="One of its choices.")


class GoldGradesSerializer(ParticipantActionSerializer):
    session = serializers.IntegerField(
        min_value=1, max_value=2**63 - 1, help_text="The task's session (step.session)."
    )
    grades = serializers.DictField(
        child=serializers.IntegerField(allow_null=True),
        help_text="{document id: grade} for both documents, grades of the study's scale.",
    )


class PostTaskAnswersSerializer(ParticipantActionSerializer):
    session = serializers.IntegerField(
        min_value=1, max_value=2**63 - 1, help_text="The finished task's session (step.session)."
    )
    answers = _answers_field("The post-task questions' answers")


class WithdrawSerializer(ParticipantActionSerializer):
    """Withdraw: the participant's data is deleted (their event log too), so the id is not kept; withdrawing
    again changes nothing and answers the same."""
