"""Every per-query score of a run, in one paginated list (JSON, cursor-paginated) or one file (CSV)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
from django.db.models import F
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import generics, serializers
from rest_framework.pagination import CursorPagination
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.settings import api_settings

from studies.api.population_params import request_population
from studies.api.views.common import filter_parameters, query_parameter
from studies.population import population_q

from ..models import QueryScore
from .common import (
    FLOATS,
    PARTICIPANT_CODE,
    POPULATION_PARAMETERS,
    SCENARIO_CODE,
    SYSTEM_CODE,
    RunScoped,
    query_flag,
)
from .renderers import CSVRenderer


class QueryScoreRowSerializer(serializers.Serializer):
    """One query's sDCG at X in the run, with its session's design; `by_rank` only with ?by_rank=1."""

    session = serializers.IntegerField(source="session_id")
    participant = serializers.CharField()
    scenario = serializers.CharField()
    system = serializers.CharField()
    query = serializers.IntegerField(source="query_id")
    position = serializers.IntegerField()
    text = serializers.CharField()
    is_last = serializers.BooleanField()
    sdcg = serializers.FloatField()
    by_rank = serializers.SerializerMethodField(
        help_text="Only with ?by_rank=1: the query's sDCG at ranks 1..100 (float32 precision)."
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.context.get("by_rank"):
            self.fields.pop("by_rank")

    @extend_schema_field(FLOATS)
    def get_by_rank(self, row):
        return _by_rank(row["by_rank"])


def _by_rank(raw) -> list[float]:
    return np.frombuffer(bytes(raw), dtype=np.float32).astype(np.float64).tolist()


class QueryScoreCursor(CursorPagination):
    """By session, then position in it: the cursor holds the last session id (and how many of its queries
    were on the page), so a page costs one index range scan however deep, and rows scored while a client
    pages are neither skipped nor repeated."""

    ordering = ("session_id", "position")
    page_size = 1000
    page_size_query_param = "page_size"
    max_page_size = 5000


CSV_COLUMNS = ["session", "participant", "scenario", "system", "query", "position", "text", "is_last", "sdcg"]


QUERY_SCORE_FILTERS = {
    "system": ("session__assignment__system__code", SYSTEM_CODE),
    "scenario": ("session__assignment__scenario__code", SCENARIO_CODE),
    "participant": ("session__assignment__participant__code", PARTICIPANT_CODE),
    "session": ("session_id", int),
    "is_last": ("is_last", bool),
}


@extend_schema_view(
    get=extend_schema(
        parameters=[
            *filter_parameters(QUERY_SCORE_FILTERS),
            query_parameter(
                "by_rank", bool, "add each query's sDCG at ranks 1..100 (CSV: columns sdcg@1..sdcg@100)"
            ),
            query_parameter(
                "raw",
                bool,
                "CSV only: text cells as they are, without the leading ' that keeps a "
                "spreadsheet from running them as formulas",
            ),
            query_parameter(
                "format",
                str,
                "csv: the whole (filtered) result as one CSV file instead of JSON pages "
                "(or send Accept: text/csv)",
                enum=["json", "csv"],
            ),
            *POPULATION_PARAMETERS,
        ],
        responses={
            (200, "application/json"): QueryScoreRowSerializer(many=True),
            (200, "text/csv"): OpenApiTypes.STR,
        },
    )
)
class ScoringRunQueryScoreList(RunScoped, generics.ListAPIView):
    """Every per-query score of the run (sDCG at X of each query of every session), by session and position,
    with each session's participant, scenario and system: one request per page of up to 5,000 rows instead
    of one per session. JSON pages by cursor (`next` until null); CSV (`?format=csv` or Accept: text/csv)
    is the whole filtered result in one file. A pending run has no rows yet."""

    serializer_class = QueryScoreRowSerializer
    pagination_class = QueryScoreCursor
    # api_settings imports the setting's dotted paths; the stubs type them as the strings.
    renderer_classes = [
        *cast("Sequence[type[BaseRenderer]]", api_settings.DEFAULT_RENDERER_CLASSES),
        CSVRenderer,
    ]
    filters = QUERY_SCORE_FILTERS
    extra_parameters = ("by_rank", "raw", "population", "leave_out")

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "by_rank": query_flag(self.request, "by_rank")}

    def get_queryset(self):
        fields = ["session_id", "query_id", "position", "is_last", "sdcg"]
        if query_flag(self.request, "by_rank"):
            fields.append("by_rank")
        population = request_population(self.request, self.study)  # the study's default unless asked
        return QueryScore.objects.filter(
            population_q(population, "session__assignment__participant__"), run=self.run
        ).values(
            *fields,
            participant=F("session__assignment__participant__code"),
            scenario=F("session__assignment__scenario__code"),
            system=F("session__assignment__system__code"),
            text=F("query__text"),
        )

    def finalize_response(self, request, response, *args, **kwargs):
        # An error asked for as CSV (a bad filter, an unknown run) is still the API's JSON error.
        if (
            isinstance(response, Response)
            and response.status_code >= 400
            and isinstance(getattr(request, "accepted_renderer", None), CSVRenderer)
        ):
            request.accepted_renderer, request.accepted_media_type = JSONRenderer(), "application/json"
        return super().finalize_response(request, response, *args, **kwargs)

    def list(self, request, *args, **kwargs):
        if request.accepted_renderer.format != "csv":
            return super().list(request, *args, **kwargs)
        self.check_query_parameters()
        rows = self.filter_queryset(self.get_queryset()).order_by(*QueryScoreCursor.ordering)
        by_rank, raw = query_flag(request, "by_rank"), query_flag(request, "raw")
        header = CSV_COLUMNS + ([f"sdcg@{rank}" for rank in range(1, 101)] if by_rank else [])
        lines = CSVRenderer.lines(_csv_rows(rows, by_rank=by_rank), header=header, raw=raw)
        response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = (
            f'attachment; filename="{self.study.slug}-run-{self.run.pk}-query-scores.csv"'
        )
        return response


def _csv_rows(rows, *, by_rank: bool):
    """The rows of the CSV in CSV_COLUMNS order (by_rank last, a list: columns sdcg@1..sdcg@100), a chunk of
    the query at a time: a run of 100,000 queries is never held whole."""
    for row in rows.iterator(chunk_size=2000):
        cells = {
            "session": row["session_id"],
            "participant": row["participant"],
            "scenario": row["scenario"],
            "system": row["system"],
            "query": row["query_id"],
            "position": row["position"],
            "text": row["text"],
            "is_last": row["is_last"],
            "sdcg": row["sdcg"],
        }
        if by_rank:
            cells["by_rank"] = _by_rank(row["by_rank"])
        yield cells
