"""A run's session scores (filtered by system, scenario, participant, end reason) and one session's query
scores."""

from __future__ import annotations

import numpy as np
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import generics, serializers

from studies.api.population_params import request_population
from studies.api.views.common import OneOf, filter_parameters, query_parameter
from studies.models import SearchSession
from studies.population import population_q

from ..models import QueryScore, SessionScore
from .common import (
    FLOATS,
    PARTICIPANT_CODE,
    POPULATION_PARAMETERS,
    SCENARIO_CODE,
    SYSTEM_CODE,
    RunScoped,
    query_flag,
)


class SessionScoreSerializer(serializers.ModelSerializer):
    """One session's results in a run; `curve`, `ideal` and `normalized` only with ?curves=1."""

    session = serializers.IntegerField(source="session_id", read_only=True)
    participant = serializers.CharField(source="participant.code", read_only=True)
    scenario = serializers.CharField(source="scenario.code", read_only=True)
    system = serializers.CharField(source="system.code", read_only=True)
    curve = serializers.SerializerMethodField(
        help_text="Only with ?curves=1: the cumulated session curve (sDCG "
        "at each position of the concatenated top-X lists)."
    )
    ideal = serializers.SerializerMethodField(help_text="Only with ?curves=1: the ideal curve.")
    normalized = serializers.SerializerMethodField(
        help_text="Only with ?curves=1: curve / ideal (0 where the ideal is 0)."
    )
    measures = serializers.DictField(
        child=serializers.FloatField(),
        read_only=True,
        help_text="The run's other session measures for this session, by name (the run's `measures`; empty "
        "when it selected none): one number each, 0 for an empty recall base, never NaN.",
    )

    class Meta:
        model = SessionScore
        fields = [
            "session",
            "participant",
            "scenario",
            "system",
            "n_queries",
            "end_reason",
            "length",
            "final",
            "ideal_final",
            "normalized_final",
            "last_query",
            "best_query",
            "average",
            "unjudged",
            "measures",
            "curve",
            "ideal",
            "normalized",
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.context.get("curves"):
            for name in ("curve", "ideal", "normalized"):
                self.fields.pop(name)

    @extend_schema_field(FLOATS)
    def get_curve(self, score):
        return np.frombuffer(bytes(score.curve), dtype=np.float64).tolist()

    @extend_schema_field(FLOATS)
    def get_ideal(self, score):
        return np.frombuffer(bytes(score.ideal), dtype=np.float64).tolist()

    @extend_schema_field(FLOATS)
    def get_normalized(self, score):
        curve = np.frombuffer(bytes(score.curve), dtype=np.float64)
        ideal = np.frombuffer(bytes(score.ideal), dtype=np.float64)
        values = np.zeros_like(curve)
        np.divide(curve, ideal, out=values, where=ideal != 0)
        return values.tolist()


class QueryScoreSerializer(serializers.ModelSerializer):
    """One query's sDCG at X (its cut of the session curve); `by_rank` only with ?by_rank=1."""

    query = serializers.IntegerField(source="query_id", read_only=True)
    text = serializers.CharField(source="query.text", read_only=True)
    by_rank = serializers.SerializerMethodField(
        help_text="Only with ?by_rank=1: the query's sDCG at ranks 1..100 (float32 precision)."
    )

    class Meta:
        model = QueryScore
        fields = ["query", "position", "text", "is_last", "sdcg", "by_rank"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.context.get("by_rank"):
            self.fields.pop("by_rank")

    @extend_schema_field(FLOATS)
    def get_by_rank(self, score):
        return np.frombuffer(bytes(score.by_rank), dtype=np.float32).astype(np.float64).tolist()


SESSION_SCORE_FILTERS = {
    "system": ("system__code", SYSTEM_CODE),
    "scenario": ("scenario__code", SCENARIO_CODE),
    "participant": ("participant__code", PARTICIPANT_CODE),
    "min_queries": ("n_queries__gte", int),
    "end_reason": ("end_reason", OneOf(SearchSession.EndReason.values)),
    "unjudged": ("unjudged", bool),
}


@extend_schema_view(
    get=extend_schema(
        parameters=[
            *filter_parameters(SESSION_SCORE_FILTERS),
            query_parameter("curves", bool, "add each session's curve, ideal and normalized arrays"),
            *POPULATION_PARAMETERS,
        ]
    )
)
class ScoringRunSessionList(RunScoped, generics.ListAPIView):
    """The run's per-session results (as stored: summaries, and with ?curves=1 the curves) of the analysis
    population's sessions (the study's default unless ?population= asks for another), ordered by session.
    A run still pending has none yet; a running one those scored so far."""

    serializer_class = SessionScoreSerializer
    filters = SESSION_SCORE_FILTERS
    extra_parameters = ("curves", "population", "leave_out")

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "curves": query_flag(self.request, "curves")}

    def get_queryset(self):
        population = request_population(self.request, self.study)
        queryset = (
            SessionScore.objects.filter(population_q(population, "participant__"), run=self.run)
            .select_related("participant", "scenario", "system")
            .order_by("session_id")
        )
        return (
            queryset.defer("grid")
            if query_flag(self.request, "curves")
            else queryset.defer("grid", "curve", "ideal")
        )


@extend_schema_view(
    get=extend_schema(
        parameters=[
            query_parameter(
                "is_last", bool, "filter: only the session's last query (true) or the earlier ones (false)"
            ),
            query_parameter("by_rank", bool, "add each query's sDCG at ranks 1..100"),
        ]
    )
)
class ScoringRunQueryList(RunScoped, generics.ListAPIView):
    """One session's per-query results in the run (sDCG at X of each query, in the order issued). The session
    must be one of the study's (404 otherwise); a session the run has not scored has no rows."""

    serializer_class = QueryScoreSerializer
    filters = {"is_last": ("is_last", bool)}
    extra_parameters = ("by_rank",)

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "by_rank": query_flag(self.request, "by_rank")}

    def get_queryset(self):
        session = get_object_or_404(
            SearchSession.objects.filter(assignment__participant__study=self.study).only("pk"),
            pk=self.kwargs["session_pk"],
        )
        queryset = (
            QueryScore.objects.filter(run=self.run, session=session)
            .select_related("query")
            .only("query_id", "query__text", "position", "is_last", "sdcg", "by_rank", "run_id", "session_id")
            .order_by("position")
        )
        return queryset if query_flag(self.request, "by_rank") else queryset.defer("by_rank")
