"""The assessors' agreement for scripts: GET /api/studies/<id>/agreement/, every coefficient with its standard
error, interval, p-value, method and n, per scenario and overall, for each pair of assessors and over all of
them (studies/assessment/adjudication.assessor_agreement), and each participant's and scenario's grades
against the newest reference version (participant_reference_agreement); docs/assessing.md, "Agreement".
`?format=csv` (or Accept: text/csv) is the same bytes as the study's agreement.csv download (the assessors'
figures)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from studies.api import serializers as s
from studies.api.views.common import StudyScoped, query_parameter
from studies.assessment.adjudication import assessor_agreement, participant_reference_agreement
from studies.assessment.agreement_estimates import CONFIDENCE_LEVEL
from studies.assessment.assessor_figures import agreement_csv_rows, assessor_figures
from studies.interchange.tidy_csv import table_csv


class AgreementCSVRenderer(BaseRenderer):
    """Lets `?format=csv` and `Accept: text/csv` choose the CSV: the view writes it (the download's bytes),
    and an error is answered in JSON (finalize_response), so this renders nothing itself."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return b""


class StudyAgreement(StudyScoped, APIView):
    """Agreement between the study's assessors (machine assessors too): a block per scenario, then one over
    every scenario (`scenario` null); in each, every coefficient over all assessors and, for each pair on
    the documents both graded, the confusion matrix and every coefficient; then the participants' own grades
    against the newest reference version, per participant and per scenario, with the same coefficients.
    Undefined figures are null."""

    renderer_classes = [
        *cast("Sequence[type[BaseRenderer]]", api_settings.DEFAULT_RENDERER_CLASSES),
        AgreementCSVRenderer,
    ]
    pagination_class = None

    @extend_schema(
        parameters=[
            query_parameter(
                "format",
                str,
                "csv: the rows of the study's agreement.csv download (or send Accept: text/csv)",
                enum=["json", "csv"],
            ),
            query_parameter("raw", bool, "CSV only: text cells as stored, not spreadsheet-safe"),
        ],
        responses={
            (200, "application/json"): s.StudyAgreementSerializer,
            (200, "text/csv"): OpenApiTypes.STR,
        },
    )
    def get(self, request, study_pk):
        unknown = sorted(set(request.query_params) - {"format", "raw"})
        if unknown:
            raise ValidationError(
                {name[:40]: "unknown query parameter (this endpoint takes format, raw)" for name in unknown}
            )
        raw = self.filter_value("raw", request.query_params.get("raw", "false"), bool)
        blocks = assessor_agreement(study=self.study)
        if request.accepted_renderer.format == "csv":
            response = HttpResponse(
                table_csv(agreement_csv_rows(blocks, assessor_figures(study=self.study)), raw=raw),
                content_type="text/csv; charset=utf-8",
            )
            response["Content-Disposition"] = f'attachment; filename="{self.study.slug}-agreement.csv"'
            return response
        version, per_participant, per_scenario = participant_reference_agreement(study=self.study)
        against_reference = (
            None
            if version is None
            else {
                "version": version.number,
                "per_participant": s.ReferenceAgreementRowSerializer(per_participant, many=True).data,
                "per_scenario": s.ReferenceAgreementRowSerializer(per_scenario, many=True).data,
            }
        )
        body = {
            "scale": self.study.grade_values(),
            "level": CONFIDENCE_LEVEL,
            "blocks": s.AgreementBlockSerializer(blocks, many=True).data,
            "participants_against_reference": against_reference,
        }
        return Response(body)

    def finalize_response(self, request, response, *args, **kwargs):
        # An error asked for as CSV (an unknown parameter) is still the API's JSON error.
        if (
            isinstance(response, Response)
            and response.status_code >= 400
            and isinstance(getattr(request, "accepted_renderer", None), AgreementCSVRenderer)
        ):
            request.accepted_renderer, request.accepted_media_type = JSONRenderer(), "application/json"
        return super().finalize_response(request, response, *args, **kwargs)
