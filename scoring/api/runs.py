"""The runs themselves: list (filtered), create (services.scoring_run_create, scored on commit), read, make
the study's default."""

from __future__ import annotations

import dataclasses

from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from studies.api.views.common import OneOf, StudyScoped, filter_parameters

from .. import services
from ..freshness import Freshness, run_freshness, runs_freshness
from ..lib.session import DUPLICATES, FORMULATIONS, SCANS, SHORT_LISTS, default_weights
from ..lib.session_measures import MEASURE_LABELS, MEASURES, MeasureParams
from ..models import ScoringRun
from .common import RunScoped, study_runs


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


class FreshnessSerializer(serializers.Serializer):
    """Whether a run's scores are the study's current ones (scoring/freshness.py)."""

    current = serializers.BooleanField(read_only=True)
    reasons = serializers.ListField(child=serializers.CharField(), read_only=True)
    latest_reference_version_number = serializers.IntegerField(read_only=True, allow_null=True)


class ScoringRunSerializer(serializers.ModelSerializer):
    reference_version_number = serializers.IntegerField(
        source="reference_version.number", read_only=True, allow_null=True, default=None
    )
    created_by = serializers.CharField(
        source="created_by.username", read_only=True, allow_null=True, default=None
    )
    measure_params = serializers.SerializerMethodField(
        help_text="The parameters the run's measures are computed with: the library's defaults with the "
        "run's top (k), b and bq, fixed when the run was created."
    )
    stale = serializers.SerializerMethodField(
        help_text="true when the run's scores are not the study's current ones (the reasons in `freshness`), "
        'decided when read: docs/dashboards.md, "Is a run current?"'
    )
    freshness = serializers.SerializerMethodField(
        help_text="Whether the run's scores are current, decided when read: `current`, `reasons` (plain "
        'sentences, e.g. "scored on reference v1, v6 is the latest", "3 sessions ended since") and '
        "`latest_reference_version_number`."
    )

    class Meta:
        model = ScoringRun
        fields = [
            "id",
            "label",
            # the parameters (docs/scoring-eval.md)
            "weights",
            "b",
            "bq",
            "top",
            "formulation",
            "gain",
            "duplicates",
            "short_lists",
            "scan",
            "scan_min_visible_ms",
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
            "freshness",
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

    def _freshness(self, run) -> Freshness:
        # The list computes every run's at once (three queries); a single run here.
        known = self.context.get("freshness") or {}
        return known[run.pk] if run.pk in known else run_freshness(run)

    @extend_schema_field(serializers.BooleanField())
    def get_stale(self, run) -> bool:
        return self._freshness(run).stale

    @extend_schema_field(FreshnessSerializer)
    def get_freshness(self, run) -> dict:
        return self._freshness(run).as_dict()

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
    """The parameters of a new run; every one optional, defaults as in docs/scoring-eval.md (the ECIR 2008
    paper's). Needs the study in the context: the weights must cover its grades."""

    # A field named label: the stubs see a Serializer's own (Field's) label attribute.
    label = serializers.CharField(  # type: ignore[assignment]
        max_length=200, required=False, allow_blank=True, default=""
    )
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
    scan_min_visible_ms = serializers.IntegerField(
        required=False,
        default=1000,
        min_value=0,
        max_value=600_000,
        help_text="scan=exposure: a query's depth is the deepest rank on screen for at least this many ms.",
    )
    judgments = serializers.ChoiceField(
        choices=ScoringRun.Judgments.choices, required=False, default=ScoringRun.Judgments.REFERENCE
    )
    measures = serializers.ListField(
        child=_measure_choice(),
        required=False,
        default=list,
        max_length=100,
        help_text="The other session measures to compute for each session, beside sDCG (each session's "
        "values then come in its `measures`; docs/scoring-sessions.md). A name given twice counts once. "
        "Their parameters are the library's defaults with this run's top, b and bq (`measure_params` of "
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


RUN_FILTERS = {
    "status": ("status", OneOf(ScoringRun.Status.values)),
    "is_default": ("is_default", bool),
    # Decided when read (scoring/freshness.py), not the stored flag: ScoringRunList.filter_queryset.
    "stale": ("stale", bool),
    "judgments": ("judgments", OneOf(ScoringRun.Judgments.values)),
}


@extend_schema_view(get=extend_schema(parameters=filter_parameters(RUN_FILTERS)))
class ScoringRunList(StudyScoped, generics.ListAPIView):
    """The study's scoring runs, newest first, with their parameters, status and progress. POST creates one
    (`scoring.services.scoring_run_create`, with the latest reference version): it is scored in the
    background, so it answers 201 with status `pending`; poll the run for its progress."""

    serializer_class = ScoringRunSerializer
    filters = {name: rule for name, rule in RUN_FILTERS.items() if name != "stale"}
    extra_parameters = ("stale",)

    def get_queryset(self):
        return study_runs(self.study).order_by("-created_at", "-id")

    def filter_queryset(self, queryset):
        queryset = super().filter_queryset(queryset)
        raw = self.request.query_params.get("stale")
        self._freshness = runs_freshness(self.study, queryset)
        if raw:
            wanted = self.filter_value("stale", raw, bool)
            queryset = queryset.filter(
                pk__in=[pk for pk, freshness in self._freshness.items() if freshness.stale == wanted]
            )
        return queryset

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "freshness": getattr(self, "_freshness", {})}

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
            ScoringRunSerializer(study_runs(self.study).get(pk=run.pk)).data, status=status.HTTP_201_CREATED
        )


class ScoringRunDetail(RunScoped, generics.RetrieveAPIView):
    """One run: its parameters, reference version, status and progress (progress_done of progress_total
    sessions in the current pass), whether it is the study's default run and whether it is stale."""

    serializer_class = ScoringRunSerializer

    def get_object(self):
        return self.run


class ScoringRunMakeDefault(RunScoped, APIView):
    """Make the run the study's default (live) run: new sessions, changed judgments and new reference versions
    re-score it. An older run is brought up to date (the latest reference version, what it owes re-scored
    on commit; `stale` until then). The previous default run stays as it is."""

    @extend_schema(request=None, responses={200: ScoringRunSerializer})
    def post(self, request, study_pk, run_pk):
        services.scoring_run_make_default(run=self.run)
        return Response(ScoringRunSerializer(study_runs(self.study).get(pk=self.run.pk)).data)
