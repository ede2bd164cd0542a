"""Sessions, queries, judgments and events: read-only (participants write them through their own
endpoints)."""

from __future__ import annotations

from django.db.models import Count, Prefetch
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics

from studies.api import serializers as s
from studies.api.views.common import (
    OneOf,
    StudyCode,
    StudyScoped,
    filter_parameters,
)
from studies.kernel.event_log import events_readable, study_events_in_log_order
from studies.models import (
    Judgment,
    Query,
    SearchSession,
    ShownResult,
)

PARTICIPANT_CODE = StudyCode("participants", "participant")
SCENARIO_CODE = StudyCode("scenarios", "scenario")
SYSTEM_CODE = StudyCode("systems", "system")

SESSION_FILTERS = {
    "participant": ("assignment__participant__code", PARTICIPANT_CODE),
    "scenario": ("assignment__scenario__code", SCENARIO_CODE),
    "system": ("assignment__system__code", SYSTEM_CODE),
    "position": ("assignment__position", int),
    "end_reason": ("end_reason", OneOf(SearchSession.EndReason.values)),
    "open": ("ended_at__isnull", bool),
}


def sessions_with_design(study):
    return (
        SearchSession.objects.filter(assignment__participant__study=study)
        .select_related("assignment__participant", "assignment__scenario", "assignment__system")
        .annotate(query_count=Count("queries", distinct=True))
        .order_by("id")
    )


def _shown():
    return Prefetch("shown_results", queryset=ShownResult.objects.select_related("document").order_by("rank"))


def _history_judgments():
    return (
        Judgment.objects.select_related("document", "session__assignment__participant")
        .prefetch_related("history")
        .order_by("id")
    )


@extend_schema_view(get=extend_schema(parameters=filter_parameters(SESSION_FILTERS, previews=True)))
class SessionList(StudyScoped, generics.ListAPIView):
    """Search sessions with their design; `open=true` lists the sessions not ended yet."""

    serializer_class = s.SessionSerializer
    filters = SESSION_FILTERS
    preview_lookup = "assignment__participant__preview_at"

    def get_queryset(self):
        return sessions_with_design(self.study)


class SessionDetail(StudyScoped, generics.RetrieveAPIView):
    """One session with its queries (and the results shown for each) and its judgments (with their
    history)."""

    serializer_class = s.SessionDetailSerializer

    def get_queryset(self):
        queries = Query.objects.order_by("position").prefetch_related(_shown())
        return sessions_with_design(self.study).prefetch_related(
            Prefetch("queries", queryset=queries), Prefetch("judgments", queryset=_history_judgments())
        )


QUERY_FILTERS = {
    "session": ("session_id", int),
    "participant": ("session__assignment__participant__code", PARTICIPANT_CODE),
    "scenario": ("session__assignment__scenario__code", SCENARIO_CODE),
    "system": ("session__assignment__system__code", SYSTEM_CODE),
    "position": ("position", int),
    "text": ("text__icontains", str),
}


@extend_schema_view(get=extend_schema(parameters=filter_parameters(QUERY_FILTERS, previews=True)))
class QueryList(StudyScoped, generics.ListAPIView):
    """Queries with the results shown for them."""

    serializer_class = s.QuerySerializer
    filters = QUERY_FILTERS
    preview_lookup = "session__assignment__participant__preview_at"

    def get_queryset(self):
        return (
            Query.objects.filter(session__assignment__participant__study=self.study)
            .prefetch_related(_shown())
            .order_by("session_id", "position")
        )


JUDGMENT_FILTERS = {
    "session": ("session_id", int),
    "participant": ("session__assignment__participant__code", PARTICIPANT_CODE),
    "scenario": ("session__assignment__scenario__code", SCENARIO_CODE),
    "system": ("session__assignment__system__code", SYSTEM_CODE),
    "doc": ("document__external_id", str),
    "grade": ("grade", OneOf(lambda view: view.study.grade_values(), int)),
}


@extend_schema_view(get=extend_schema(parameters=filter_parameters(JUDGMENT_FILTERS, previews=True)))
class JudgmentList(StudyScoped, generics.ListAPIView):
    """Participants' current judgments, each with every change."""

    serializer_class = s.JudgmentSerializer
    filters = JUDGMENT_FILTERS
    preview_lookup = "session__assignment__participant__preview_at"

    def get_queryset(self):
        return _history_judgments().filter(session__assignment__participant__study=self.study)


EVENT_FILTERS = {
    "participant": ("participant__code", PARTICIPANT_CODE),
    "session": ("session_id", int),
    "type": ("type", str),
}


@extend_schema_view(get=extend_schema(parameters=filter_parameters(EVENT_FILTERS, previews=True)))
class EventList(StudyScoped, generics.ListAPIView):
    """The raw, append-only event log: every action as the client reported it, with the server's answer."""

    serializer_class = s.EventSerializer
    filters = EVENT_FILTERS
    preview_lookup = "participant__preview_at"

    def get_queryset(self):
        # Client times Python cannot hold (stored before they were refused) read as null, not a 500.
        return events_readable(study_events_in_log_order(self.study.pk).select_related("participant"))
