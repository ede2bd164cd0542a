"""The scoring runs of the REST API (docs/api.md): serializers and views, mounted under
/api/studies/<study_pk>/scoring-runs/ by scoring/api_urls.py.

They follow studies/api/: a researcher reaches only the studies `studies_visible_to` gives them (404
otherwise, and for every run of another study), lists are paginated and filtered by hand-written query
parameters, and a list loads its rows in a fixed number of queries. Creating a run is
`services.scoring_run_create` (scoring is queued on commit); results are the stored SessionScore and
QueryScore rows, never recomputed here.
"""

from __future__ import annotations

import csv
import dataclasses
import io

import numpy as np
from django.db.models import F
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from sessionlab.spreadsheet import safe_rows
from studies.api.views.common import OneOf, StudyCode, StudyScoped, filter_parameters, query_parameter
from studies.models import SearchSession

from . import services
from .lib.session import DUPLICATES, FORMULATIONS, SCANS, SHORT_LISTS, default_weights
from .lib.session_measures import MEASURE_LABELS, MEASURES, MeasureParams
from .models import QueryScore, ScoringRun, SessionScore

# --- serializers -------------------------------------------------------------------------------------------

_FLOATS = serializers.ListField(child=serializers.FloatField())


def _measure_choice(**kwargs) -> serializers.ChoiceField:
    return serializers.ChoiceField(
        choices=[(name, MEASURE_LABELS[name]) for name in MEASURES],
        **kwargs,
        error_messages={"invalid_choice": f'unknown measure "{{input}}"; choose from {", ".join(MEASURES)}'},
    )


class MeasureParamsSerializer(serializers.Serializer):
    """The other measures' parameters a run computed them with (scoring.lib.session_measures.MeasureParams):
    the library's defaults with the run's top (k), b and bq, fixed when the run was created."""

    def get_fields(self):
        kinds = {"int": serializers.IntegerField, "float": serializers.FloatField}
        return {
            f.name: kinds[str(f.type).split(" ")[0]](read_only=True, allow_null=str(f.type).endswith("None"))
            for f in dataclasses.fields(MeasureParams)
        }


class ScoringRunSerializer(serializers.ModelSerializer):
    reference_version_number = serializers.IntegerField(
        source="reference_version.number", read_only=True, allow_null=True, default=None
    )
    created_by = serializers.CharField(
        source="created_by.username", read_only=True, allow_null=True, default=None
    )
    measure_params = serializers.SerializerMethodField(
        help_text="The parameters the run's measures are computed with: the library's defaults with the run's "
        "top (k), b and bq, fixed when the run was created."
    )

    class Meta:
        model = ScoringRun
        fields = [
            "id",
            "label",
            # the parameters (SPEC-metrics.md)
            "weights",
            "b",
            "bq",
            "top",
            "formulation",
            "gain",
            "duplicates",
            "short_lists",
            "scan",
            "judgments",
            "reference_version",
            "reference_version_number",
            "grid_b",
            "grid_bq",
            # the other session measures (scoring.lib.session_measures) and their parameters
            "measures",
            "measure_params",
            # state
            "status",
            "error",
            "progress_done",
            "progress_total",
            "is_default",
            "stale",
            "stale_since",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields

    @extend_schema_field(MeasureParamsSerializer)
    def get_measure_params(self, run):
        # Every parameter as the scoring uses it (services.run_measure_params): a field stored by an older
        # version and since dropped is not shown, one added since shows its default.
        return dataclasses.asdict(services.run_measure_params(run))

    def build_field(self, field_name, info, model_class, nested_depth):
        # The JSON columns are lists of numbers: say so (a ListField) rather than "any JSON".
        if field_name in ("weights", "grid_b", "grid_bq"):
            return serializers.ListField, {"child": serializers.FloatField(), "read_only": True}
        if field_name == "measures":
            return serializers.ListField, {
                "child": _measure_choice(),
                "read_only": True,
                "help_text": "The other session measures the run computes, in order "
                "(docs/scoring-sessions.md).",
            }
        return super().build_field(field_name, info, model_class, nested_depth)


class ScoringRunCreateSerializer(serializers.Serializer):
    """The parameters of a new run; every one optional, defaults as in SPEC-metrics.md (the ECIR 2008 paper's).
    Needs the study in the context: the weights must cover its grades."""

    label = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    weights = serializers.ListField(
        child=serializers.FloatField(),
        min_length=1,
        max_length=100,
        required=False,
        default=None,
        help_text="Gain of grades 0, 1, 2, ...: one weight per grade of the study's scale (ignored by "
        "kanoulas2011 and by exponential gain, which still need one per grade). Default: the scale's "
        "(0,1,10,100 on 0..3; each grade ten times the one below on other scales).",
    )
    b = serializers.FloatField(required=False, default=2.0, help_text="Rank log base, > 1.")
    bq = serializers.FloatField(required=False, default=4.0, help_text="Query log base, 1 < bq < 1000.")
    top = serializers.IntegerField(
        required=False, default=10, min_value=1, max_value=1000, help_text="The scanning length X."
    )
    formulation = serializers.ChoiceField(choices=list(FORMULATIONS), required=False, default="2008")
    gain = serializers.ChoiceField(
        choices=ScoringRun.Gain.choices, required=False, default=ScoringRun.Gain.LINEAR
    )
    duplicates = serializers.ChoiceField(choices=list(DUPLICATES), required=False, default="every")
    short_lists = serializers.ChoiceField(choices=list(SHORT_LISTS), required=False, default="pad")
    scan = serializers.ChoiceField(choices=list(SCANS), required=False, default="fixed")
    judgments = serializers.ChoiceField(
        choices=ScoringRun.Judgments.choices, required=False, default=ScoringRun.Judgments.REFERENCE
    )
    measures = serializers.ListField(
        child=_measure_choice(),
        required=False,
        default=list,
        max_length=100,
        help_text="The other session measures to compute for each session, beside sDCG (each session's values "
        "then come in its `measures`; docs/scoring-sessions.md). A name given twice counts once. Their "
        "parameters are the library's defaults with this run's top, b and bq (`measure_params` of "
        "the created run).",
    )
    make_default = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="true: the study's default (live) run from now on; false: never; unset: only if the study "
        "has no default run yet.",
    )

    def validate_b(self, value):
        if not value > 1.0:
            raise ValidationError("the rank log base b must be greater than 1")
        return value

    def validate_bq(self, value):
        if not 1.0 < value < 1000.0:
            raise ValidationError("the query log base bq must satisfy 1 < bq < 1000")
        return value

    def validate(self, attrs):
        if "measure_params" in self.initial_data:
            # Silently ignoring it would let a researcher believe a p_down or half-life of theirs was used.
            raise ValidationError(
                {
                    "measure_params": "cannot be given: the measures use the library's defaults "
                    "with the run's top, b and bq (docs/scoring-sessions.md)"
                }
            )
        attrs["measures"] = list(dict.fromkeys(attrs["measures"]))
        study = self.context["study"]
        grades = study.grade_values()
        if attrs["weights"] is None:
            attrs["weights"] = list(default_weights(grades))
        if attrs["formulation"] != "kanoulas2011" and grades and max(grades) >= len(attrs["weights"]):
            raise ValidationError(
                {
                    "weights": f"the study's grades go to {max(grades)}: give {max(grades) + 1} "
                    f"weights (grades 0..{max(grades)}), not {len(attrs['weights'])}"
                }
            )
        if attrs["judgments"] == ScoringRun.Judgments.REFERENCE and not study.reference_versions.exists():
            raise ValidationError(
                {
                    "judgments": "the study has no reference judgments yet: import a reference "
                    "version, or score against the participants' own judgments"
                }
            )
        return attrs


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
        help_text="The run's other session measures for this session, by name (the run's `measures`; empty when "
        "it selected none): one number each, 0 for an empty recall base, never NaN.",
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

    @extend_schema_field(_FLOATS)
    def get_curve(self, score):
        return np.frombuffer(bytes(score.curve), dtype=np.float64).tolist()

    @extend_schema_field(_FLOATS)
    def get_ideal(self, score):
        return np.frombuffer(bytes(score.ideal), dtype=np.float64).tolist()

    @extend_schema_field(_FLOATS)
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

    @extend_schema_field(_FLOATS)
    def get_by_rank(self, score):
        return np.frombuffer(bytes(score.by_rank), dtype=np.float32).astype(np.float64).tolist()


# --- views -------------------------------------------------------------------------------------------------


def _flag(request, name: str) -> bool:
    raw = request.query_params.get(name, "")
    if raw.lower() not in {"", "true", "false", "1", "0"}:
        raise ValidationError({name: "expected true or false"})
    return raw.lower() in {"true", "1"}


def _runs(study):
    return ScoringRun.objects.filter(study=study).select_related("reference_version", "created_by")


class RunScoped(StudyScoped):
    """A view under .../scoring-runs/<run_pk>/: the run, of the visible study, or 404."""

    @property
    def run(self) -> ScoringRun:
        if not hasattr(self, "_run"):
            self._run = get_object_or_404(_runs(self.study), pk=self.kwargs["run_pk"])
        return self._run


RUN_FILTERS = {
    "status": ("status", OneOf(ScoringRun.Status.values)),
    "is_default": ("is_default", bool),
    "stale": ("stale", bool),
    "judgments": ("judgments", OneOf(ScoringRun.Judgments.values)),
}


@extend_schema_view(get=extend_schema(parameters=filter_parameters(RUN_FILTERS)))
class ScoringRunList(StudyScoped, generics.ListAPIView):
    """The study's scoring runs, newest first, with their parameters, status and progress. POST creates one
    (`scoring.services.scoring_run_create`, with the latest reference version): it is scored in the
    background, so it answers 201 with status `pending`; poll the run for its progress."""

    serializer_class = ScoringRunSerializer
    filters = RUN_FILTERS

    def get_queryset(self):
        return _runs(self.study).order_by("-created_at", "-id")

    @extend_schema(request=ScoringRunCreateSerializer, responses={201: ScoringRunSerializer})
    def post(self, request, study_pk):
        data = ScoringRunCreateSerializer(data=request.data, context={"study": self.study})
        data.is_valid(raise_exception=True)
        try:
            run = services.scoring_run_create(
                study=self.study, created_by=request.user, **data.validated_data
            )
        except (
            services.ScoringError
        ) as error:  # checked above; a race (a version deleted meanwhile) lands here
            raise ValidationError({"non_field_errors": [str(error)]}) from None
        return Response(
            ScoringRunSerializer(_runs(self.study).get(pk=run.pk)).data, status=status.HTTP_201_CREATED
        )


class ScoringRunDetail(RunScoped, generics.RetrieveAPIView):
    """One run: its parameters, reference version, status and progress (progress_done of progress_total
    sessions in the current pass), whether it is the study's default run and whether it is stale."""

    serializer_class = ScoringRunSerializer

    def get_object(self):
        return self.run


class ScoringRunMakeDefault(RunScoped, APIView):
    """Make the run the study's default (live) run: new sessions, changed judgments and new reference versions
    re-score it. The previous default run stays as it is."""

    @extend_schema(request=None, responses={200: ScoringRunSerializer})
    def post(self, request, study_pk, run_pk):
        services.scoring_run_make_default(run=self.run)
        return Response(ScoringRunSerializer(_runs(self.study).get(pk=self.run.pk)).data)


SYSTEM_CODE = StudyCode("systems", "system")
SCENARIO_CODE = StudyCode("scenarios", "scenario")
PARTICIPANT_CODE = StudyCode("participants", "participant")

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
        ]
    )
)
class ScoringRunSessionList(RunScoped, generics.ListAPIView):
    """The run's per-session results (as stored: summaries, and with ?curves=1 the curves), ordered by
    session. A run still pending has none yet; a running one those scored so far."""

    serializer_class = SessionScoreSerializer
    filters = SESSION_SCORE_FILTERS
    extra_parameters = ("curves",)

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "curves": _flag(self.request, "curves")}

    def get_queryset(self):
        queryset = (
            SessionScore.objects.filter(run=self.run)
            .select_related("participant", "scenario", "system")
            .order_by("session_id")
        )
        return (
            queryset.defer("grid")
            if _flag(self.request, "curves")
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
        return {**super().get_serializer_context(), "by_rank": _flag(self.request, "by_rank")}

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
        return queryset if _flag(self.request, "by_rank") else queryset.defer("by_rank")


# --- every per-query score of a run, in one paginated list (JSON) or one file (CSV) -----------------------


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

    @extend_schema_field(_FLOATS)
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


class CSVRenderer(BaseRenderer):
    """CSV of flat rows (`?format=csv` or `Accept: text/csv`). `render` takes what a view would answer in JSON:
    a list of dicts, or a page ({"results": [...]}) of them; `lines` writes the same one line at a time, for a
    StreamingHttpResponse of rows never held whole (ScoringRunQueryScoreList does). The header is the first
    row's keys (or the one given); a list value becomes one cell per item, headed `<key>@1`, `<key>@2`, ...;
    booleans are true/false, None an empty cell. Text cells a spreadsheet would run as formulas get a leading '
    unless ?raw=1 (sessionlab/spreadsheet.py). An error is answered in JSON whatever was asked (the view's
    finalize_response), so `render` only meets rows."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        if isinstance(data, dict):
            data = data["results"] if isinstance(data.get("results"), list) else [data]
        request = (renderer_context or {}).get("request")
        raw = request is not None and request.query_params.get("raw", "").lower() in {"1", "true"}
        return "".join(self.lines(data, raw=raw)).encode(self.charset)

    @staticmethod
    def lines(rows, *, header: list[str] | None = None, raw: bool = False):
        """The CSV of `rows` (an iterable of dicts, values in column order) as an iterator of lines."""
        buffer = io.StringIO()
        writer = csv.writer(buffer)

        def line(cells):
            buffer.seek(0)
            buffer.truncate()
            writer.writerow(cells)
            return buffer.getvalue()

        if header is not None:
            yield line(header)
        for row in rows:
            cells = []
            for value in row.values():
                if isinstance(value, list | tuple):
                    cells.extend(value)
                elif isinstance(value, bool):
                    cells.append("true" if value else "false")
                else:
                    cells.append("" if value is None else value)
            if header is None:
                header = [
                    name
                    for name, value in row.items()
                    for name in (
                        [f"{name}@{i}" for i in range(1, len(value) + 1)]
                        if isinstance(value, list | tuple)
                        else [name]
                    )
                ]
                yield line(header)
            yield line(next(iter(safe_rows([cells], raw=raw))))


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
    renderer_classes = [*api_settings.DEFAULT_RENDERER_CLASSES, CSVRenderer]
    filters = QUERY_SCORE_FILTERS
    extra_parameters = ("by_rank", "raw")

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "by_rank": _flag(self.request, "by_rank")}

    def get_queryset(self):
        fields = ["session_id", "query_id", "position", "is_last", "sdcg"]
        if _flag(self.request, "by_rank"):
            fields.append("by_rank")
        return QueryScore.objects.filter(run=self.run).values(
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
        by_rank, raw = _flag(request, "by_rank"), _flag(request, "raw")
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
