"""The participant's whole way (consent to the last post-task questions): the step and its actions
(docs/api.md, "The whole way")."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from studies.api.serializers.design import GradeLevelSerializer
from studies.api.serializers.participant_api import TaskSerializer
from studies.kernel.steps import StepKind


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
    label = serializers.CharField(read_only=True)  # type: ignore[assignment]  # a field, not Field.label
    kind = serializers.ChoiceField(["integer", "number", "scale", "text", "choice"], read_only=True)
    min = NumberField(read_only=True, allow_null=True, help_text="A number's lowest answer (null: none).")
    max = NumberField(read_only=True, allow_null=True, help_text="A number's highest answer (null: none).")
    choices = serializers.ListField(
        child=serializers.CharField(),
        read_only=True,
        help_text="A choice question's options, the answer one of them (else empty).",
    )
    required = serializers.BooleanField(read_only=True)  # type: ignore[assignment]  # a field, not Field.required
    min_label = serializers.CharField(
        read_only=True, allow_blank=True, help_text="A scale's anchor at its low end (else empty)."
    )
    max_label = serializers.CharField(
        read_only=True, allow_blank=True, help_text="A scale's anchor at its high end (else empty)."
    )
    other = serializers.BooleanField(
        read_only=True,
        help_text='A choice with "Other (please specify)": answer "other" and the text under "<name>.other".',
    )
    new_page = serializers.BooleanField(
        read_only=True, help_text="A page break before this question (a form may show all at once)."
    )


class CheckItemSerializer(serializers.Serializer):
    """An attention or comprehension check, never with its answer."""

    name = serializers.CharField(read_only=True, help_text="Send it back as `check`.")
    kind = serializers.ChoiceField(["attention", "comprehension"], read_only=True)
    label = serializers.CharField(read_only=True)  # type: ignore[assignment]  # a field, not Field.label
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
    message = serializers.CharField(
        read_only=True,
        allow_blank=True,
        help_text="Why there is no code yet (the study's pool of codes ran out; ask again later).",
    )


STEP_KINDS = [kind.value for kind in StepKind]  # the schema's order: StepKind's


class ParticipantStepSerializer(serializers.Serializer):
    """The participant's current step and what a front-end needs to show it (docs/api.md, "The whole way")."""

    kind = serializers.ChoiceField(
        STEP_KINDS,
        read_only=True,
        help_text=(
            "consent, questionnaire, checks, pre_task, scenario (read the task, start its session), search, "
            "gold, post_task: the participant acts; done, declined, withdrawn, ended (returned, timed out, "
            "screened out), paused (the study takes no new step now), no_assignments: nothing to do."
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
