"""The study's exports as API downloads, the same bytes as the study page's Downloads and the commands:
GET /api/studies/<id>/archive/ (JSON), /tables/ (the tidy CSV tables, zip), /runs/?unit=query|session (TREC
runs, zip). The qrels of each reference version and the Session Track XML have their own endpoints
(reference-versions/<id>/qrels/, session-track/). The downloads stream (studies/interchange/downloads.py):
a bad parameter or an export that cannot be written is refused before the first byte. The archive and the
tables hold the panel ids only with `include=panel_ids`, which the study's owner alone may ask
(studies/interchange/panel_ids.py): anyone else gets a 403 saying why."""

from __future__ import annotations

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.views import APIView

from studies.api.population_params import population_parameters, request_population
from studies.api.views.common import StudyScoped, conflict, query_parameter
from studies.errors import ExportError, StudyOwnerOnlyError
from studies.interchange.archive import study_archive_stream
from studies.interchange.downloads import runs_zip_stream, tables_zip_stream
from studies.interchange.panel_ids import INCLUDABLE, panel_ids_asked
from studies.interchange.trec import PRACTICE, UNITS


def _download(chunks, content_type: str, filename: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(chunks, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _only(request, *names: str) -> None:
    unknown = sorted(set(request.query_params) - set(names))
    if unknown:
        raise ValidationError(
            {
                name[:40]: f"unknown parameter; this endpoint takes {', '.join(names) or 'none'}"
                for name in unknown
            }
        )


def _panel_ids(request, study) -> bool:
    """Whether `include` asks for the panel ids, and may: a 400 naming an unknown value, a 403 with the
    reason for anyone but the study's owner."""
    try:
        return panel_ids_asked(
            study=study, user=request.user, include=request.query_params.getlist("include")
        )
    except StudyOwnerOnlyError as exc:
        raise PermissionDenied(str(exc)) from None
    except ExportError as exc:
        raise ValidationError({"include": str(exc)}) from None


INCLUDE_PARAMETER = query_parameter(
    "include",
    str,
    "panel_ids: the participants' panel ids too (they identify people on the panel; left out otherwise); "
    "the study's owner alone may ask, anyone else gets a 403",
    enum=list(INCLUDABLE),
)


class StudyArchive(StudyScoped, APIView):
    """The whole study as the JSON archive `export_study` writes and `import_study` reads back; the panel ids
    left out unless the owner asks `include=panel_ids`."""

    @extend_schema(parameters=[INCLUDE_PARAMETER], responses={(200, "application/json"): OpenApiTypes.OBJECT})
    def get(self, request, study_pk):
        _only(request, "include")
        panel_ids = _panel_ids(request, self.study)
        try:
            chunks = study_archive_stream(study=self.study, panel_ids=panel_ids)
        except ExportError as exc:
            return conflict(str(exc))
        return _download(chunks, "application/json", f"{self.study.slug}-archive.json")


POPULATION_PARAMETERS = population_parameters("; population.txt in the zip says which")


class StudyTables(StudyScoped, APIView):
    """The tidy CSV tables (sessions, queries, shown results, judgments…) of the analysis population's
    sessions in one zip, with population.txt saying which; `raw=1` leaves cells a spreadsheet would run as
    a formula as they are; the panel ids left out unless the owner asks `include=panel_ids`."""

    @extend_schema(
        parameters=[
            query_parameter("raw", bool, "cells as stored, not spreadsheet-safe"),
            *POPULATION_PARAMETERS,
            INCLUDE_PARAMETER,
        ],
        responses={(200, "application/zip"): OpenApiTypes.BINARY},
    )
    def get(self, request, study_pk):
        _only(request, "raw", "population", "leave_out", "include")
        raw = request.query_params.get("raw", "false").lower()
        if raw not in {"true", "false", "1", "0"}:
            raise ValidationError({"raw": "expected true or false"})
        panel_ids = _panel_ids(request, self.study)
        population = request_population(request, self.study)
        return _download(
            tables_zip_stream(
                study=self.study, raw=raw in {"true", "1"}, population=population, panel_ids=panel_ids
            ),
            "application/zip",
            f"{self.study.slug}-tables.zip",
        )


class StudyRuns(StudyScoped, APIView):
    """What the analysis population's participants were shown, as TREC run files (one per query, or per
    session) in one zip, with population.txt saying which population."""

    @extend_schema(
        parameters=[
            query_parameter("unit", str, "one run file per query (default) or per session", enum=list(UNITS)),
            query_parameter(
                "practice",
                str,
                "practice tasks' runs: left out (default, as scores leave them out) or written, marked"
                " `_practice` in the file name",
                enum=list(PRACTICE),
            ),
            *POPULATION_PARAMETERS,
        ],
        responses={(200, "application/zip"): OpenApiTypes.BINARY},
    )
    def get(self, request, study_pk):
        _only(request, "unit", "practice", "population", "leave_out")
        unit = request.query_params.get("unit", "query")
        if unit not in UNITS:
            raise ValidationError({"unit": f"one of {', '.join(UNITS)}"})
        practice = request.query_params.get("practice", "leave")
        if practice not in PRACTICE:
            raise ValidationError({"practice": f"one of {', '.join(PRACTICE)}"})
        population = request_population(request, self.study)
        return _download(
            runs_zip_stream(study=self.study, unit=unit, population=population, practice=practice),
            "application/zip",
            f"{self.study.slug}-runs-{unit}.zip",
        )
