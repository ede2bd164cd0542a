"""The participant's own front-end: who they are, their assignments, the event log's batches and acks, a
session's start."""

from __future__ import annotations

from rest_framework import serializers

from studies.api.serializers.design import GradeLevelSerializer
from studies.api.serializers.participants import AssignmentSerializer
from studies.models import (
    Participant,
)


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
    data = serializers.DictField(required=False)  # type: ignore[assignment]  # a field, not Serializer.data


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
