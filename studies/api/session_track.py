"""GET /api/studies/<id>/session-track/: the study's sessions as a TREC Session Track XML log, as the
export_session_track command writes it (docs/file-formats.md, docs/api.md), streamed a session at a time."""

from __future__ import annotations

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.views import APIView

from studies.api.views.common import StudyScoped
from studies.interchange.session_track import session_track_stream


class StudySessionTrack(StudyScoped, APIView):
    """The study's sessions as a TREC Session Track log (application/xml, a download named after the
    study)."""

    @extend_schema(responses={(200, "application/xml"): OpenApiTypes.STR})
    def get(self, request, study_pk):
        response = StreamingHttpResponse(
            session_track_stream(study=self.study), content_type="application/xml; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="{self.study.slug}.sessiontrack.xml"'
        return response
