"""Studies: the caller's list (POST creates one with its grade scale), one study's settings and deletion
(services.study_update, study_delete), and its relevance scale."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from studies.accounts.access import studies_visible_to
from studies.api import serializers as s
from studies.api.permissions import IsResearcher
from studies.api.views.common import (
    ApiPagination,
    FilterMixin,
    StudyScoped,
    conflict,
    filter_parameters,
)
from studies.assessment.exclusion import exclusion_apply
from studies.design import lifecycle, services
from studies.errors import DesignError, StudyStatusError
from studies.library.services import study_create_on_collection

STUDY_FILTERS = {"slug": ("slug", str), "name": ("name__icontains", str), "owner": ("owner__username", str)}


@extend_schema_view(get=extend_schema(parameters=filter_parameters(STUDY_FILTERS)))
class StudyList(FilterMixin, generics.ListAPIView):
    """The studies the caller owns or researches on. POST creates one (with its grade scale), owned by the
    caller."""

    serializer_class = s.StudySerializer
    permission_classes = [IsResearcher]
    pagination_class = ApiPagination
    filters = STUDY_FILTERS

    def get_queryset(self):
        return studies_visible_to(self.request.user).select_related("owner").prefetch_related("grade_levels")

    @extend_schema(request=s.StudyCreateSerializer, responses={201: s.StudySerializer})
    def post(self, request):
        data = s.StudyCreateSerializer(data=request.data, context={"request": request})
        data.is_valid(raise_exception=True)
        try:
            # The collection's judgments become its first reference version, as on the form.
            study = study_create_on_collection(owner=request.user, **data.validated_data)
        except services.CollectionAccessError as error:
            raise ValidationError({"collection": str(error)}) from None
        except DesignError as error:
            raise ValidationError({"grade_labels": str(error)}) from None
        return Response(s.StudySerializer(study).data, status=status.HTTP_201_CREATED)


class StudyDetail(generics.RetrieveUpdateDestroyAPIView):
    serializer_class = s.StudySerializer
    permission_classes = [IsResearcher]
    lookup_url_kwarg = "study_pk"

    def get_queryset(self):
        return studies_visible_to(self.request.user).select_related("owner").prefetch_related("grade_levels")

    def perform_update(self, serializer):
        try:
            serializer.instance = services.study_update(
                study=serializer.instance, **serializer.validated_data
            )
        except DesignError as error:  # a questionnaire change its answers forbid
            raise ValidationError({"detail": str(error)}) from None
        if {"exclusion_min_agreement", "exclusion_measure", "exclusion_min_documents"} & set(
            serializer.validated_data
        ):
            exclusion_apply(study=serializer.instance)  # marks (or clears) the participants now

    def perform_destroy(self, instance):
        try:
            services.study_delete(study=instance, by=self.request.user)
        except services.StudyOwnerOnlyError as error:
            raise PermissionDenied(str(error)) from None


class StudyStatus(StudyScoped, APIView):
    """Move the study along its life cycle, as the study page's buttons do: a draft opens once its set-up
    checklist passes (409 naming what is missing otherwise); open, paused, closed
    (docs/study-life-cycle.md)."""

    pagination_class = None

    @extend_schema(request=s.StudyStatusSerializer, responses={200: s.StudySerializer})
    def post(self, request, study_pk):
        data = s.StudyStatusSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            study = lifecycle.study_status_change(
                study=self.study, status=data.validated_data["status"], by=request.user
            )
        except StudyStatusError as error:
            return conflict(str(error))
        return Response(s.StudySerializer(study).data)


class GradeLevelList(StudyScoped, generics.ListAPIView):
    """The study's relevance scale (fixed at creation)."""

    serializer_class = s.GradeLevelSerializer

    def get_queryset(self):
        return self.study.grade_levels.order_by("value")
