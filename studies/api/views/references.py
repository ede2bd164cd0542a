"""Reference versions: listed, imported from TREC qrels as a new version, exported as qrels."""

from __future__ import annotations

from django.db.models import Count
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from scoring.lib.errors import InputError
from studies.api import serializers as s
from studies.api.views.common import (
    StudyScoped,
    conflict,
    filter_parameters,
)
from studies.assessment.references import (
    reference_version_import_qrels,
    reference_version_publish,
    reference_version_qrels,
)
from studies.errors import AssessmentError
from studies.models import (
    LLMAssessor,
    ReferenceJudgment,
    ReferenceVersion,
)


class ReferenceVersionList(StudyScoped, generics.ListAPIView):
    """The study's reference judgment versions (numbered from 1). Import qrels as a new version with POST
    .../reference-versions/import-qrels/."""

    serializer_class = s.ReferenceVersionSerializer

    def get_queryset(self):
        return (
            ReferenceVersion.objects.filter(study=self.study)
            .select_related("created_by")
            .annotate(judgment_count=Count("judgments"))
            .order_by("number")
        )


class ReferenceVersionDetail(StudyScoped, generics.RetrieveAPIView):
    serializer_class = s.ReferenceVersionSerializer

    def get_queryset(self):
        return ReferenceVersionList.get_queryset(self)


class ReferenceVersionImportQrels(StudyScoped, APIView):
    """A new reference version from TREC qrels (multipart: a `file`, or the qrels in a `text` field), all or
    nothing: a bad line, an unknown document, a grade outside the study's scale, or a file with no scenario
    topic is a 400 naming file, line and reason. Judgments of topics that are not scenarios are kept (an
    exported version imports again unchanged)."""

    # The one body that is not JSON: a file upload, so multipart only (one content type in the schema).
    parser_classes = [MultiPartParser]

    @extend_schema(request=s.QrelsImportSerializer, responses={201: s.ReferenceVersionSerializer})
    def post(self, request, study_pk):
        data = s.QrelsImportSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        if "file" in data.validated_data:
            upload = data.validated_data["file"]
            path = upload.name
            try:
                text = upload.read().decode("utf-8")
            except UnicodeDecodeError:
                raise ValidationError({"file": f"{path}: not UTF-8 text"}) from None
        else:
            path, text = "<text>", data.validated_data["text"]
        try:
            version = reference_version_import_qrels(
                study=self.study,
                lines=text.splitlines(),
                path=path,
                created_by=request.user,
                note=data.validated_data["note"],
            )
        except InputError as error:
            return Response(
                {"detail": str(error), "file": error.path, "line": error.line, "reason": error.reason},
                status=status.HTTP_400_BAD_REQUEST,
            )
        except AssessmentError as error:
            return conflict(str(error))
        version = ReferenceVersionList.get_queryset(self).get(pk=version.pk)
        return Response(s.ReferenceVersionSerializer(version).data, status=status.HTTP_201_CREATED)


class ReferenceVersionPublish(StudyScoped, APIView):
    """Publish the adjudicated grades as a new version (the page's "Publish", without its preview): merged
    into `base` (default the latest) or replacing it (`mode`), refused (409) while judged disagreements wait
    unless `allow_pending`. An LLM assessor's grades enter only by `rules` ("fill_unjudged", "break_ties")
    taken from `machine` (its id in .../llm-assessors/); the version's provenance records them. A value that
    names nothing is a 400 on its field; a refusal of the rules a 409; either way nothing is written."""

    @extend_schema(request=s.PublishSerializer, responses={201: s.ReferenceVersionSerializer})
    def post(self, request, study_pk):
        data = s.PublishSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        given = data.validated_data
        machine = None
        if given.get("machine") is not None:
            llm = LLMAssessor.objects.filter(membership__study=self.study, pk=given["machine"]).first()
            if llm is None:
                raise ValidationError({"machine": f"the study has no LLM assessor {given['machine']}"})
            machine = llm.membership
        base = given.get("base")
        if base is not None and not self.study.reference_versions.filter(number=base).exists():
            raise ValidationError({"base": f"the study has no reference version {base} to merge into"})
        try:
            version = reference_version_publish(
                study=self.study,
                created_by=request.user,
                note=given["note"],
                allow_pending=given["allow_pending"],
                mode=given["mode"],
                base_number=base,
                machine=machine,
                rules=given["rules"],
            )
        except AssessmentError as error:
            return conflict(str(error))
        version = ReferenceVersionList.get_queryset(self).get(pk=version.pk)
        return Response(s.ReferenceVersionSerializer(version).data, status=status.HTTP_201_CREATED)


class ReferenceVersionQrels(StudyScoped, APIView):
    """The version as a TREC qrels file (text/plain)."""

    @extend_schema(responses={(200, "text/plain"): OpenApiTypes.STR})
    def get(self, request, study_pk, pk):
        version = get_object_or_404(ReferenceVersion, study=self.study, pk=pk)
        return HttpResponse(
            reference_version_qrels(version=version), content_type="text/plain; charset=utf-8"
        )


REFERENCE_FILTERS = {
    "topic_id": ("topic_id", str),
    "doc": ("document__external_id", str),
    "grade": ("grade", int),
}


@extend_schema_view(get=extend_schema(parameters=filter_parameters(REFERENCE_FILTERS)))
class ReferenceJudgmentList(StudyScoped, generics.ListAPIView):
    serializer_class = s.ReferenceJudgmentSerializer
    filters = REFERENCE_FILTERS

    def get_queryset(self):
        version = get_object_or_404(ReferenceVersion, study=self.study, pk=self.kwargs["version_pk"])
        return (
            ReferenceJudgment.objects.filter(version=version)
            .select_related("document")
            .order_by("topic_id", "document__external_id")
        )
