"""Participants and their assignments (the order of scenarios and systems each works)."""

from __future__ import annotations

from rest_framework import serializers

from studies.models import (
    Assignment,
    Participant,
    ParticipantState,
)


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
        return participant.state or ParticipantState.INVITED

    def get_plan_row(self, participant) -> int:
        return participant.enrolment_index if participant.plan_row is None else participant.plan_row


class EnrolSerializer(serializers.Serializer):
    count = serializers.IntegerField(min_value=1, max_value=1000)
