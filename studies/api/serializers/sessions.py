"""What participants did: sessions, their queries and shown results, judgments, events."""

from __future__ import annotations

from rest_framework import serializers

from studies.models import (
    Event,
    Judgment,
    JudgmentChange,
    Query,
    SearchSession,
    ShownResult,
)


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
    # event_log.events_readable: null where the stored time is beyond what Python's datetime holds.
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
            "origin",  # who wrote it: client or server (docs/security.md)
        ]
