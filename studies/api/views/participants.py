"""Participants: listed with their assignments, enrolled by the study's balanced plan, withdrawn."""

from __future__ import annotations

from django.db.models import Prefetch
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from studies.api import serializers as s
from studies.api.views.common import (
    StudyScoped,
    conflict,
    filter_parameters,
)
from studies.design import services
from studies.errors import DesignError
from studies.models import (
    Assignment,
    Participant,
)
from studies.participation.recruitment.sweep import arrival_sweep
from studies.participation.way.steps import participant_withdraw

PARTICIPANT_FILTERS = {
    "code": ("code", str),
    "consented": ("!consented_at__isnull", bool),
    "withdrawn": ("!withdrawn_at__isnull", bool),
}


def participants_with_assignments(study):
    assignments = Assignment.objects.select_related("scenario", "system", "session").order_by("position")
    return study.participants.order_by("enrolment_index").prefetch_related(
        Prefetch("assignments", queryset=assignments)
    )


@extend_schema_view(get=extend_schema(parameters=filter_parameters(PARTICIPANT_FILTERS, previews=True)))
class ParticipantList(StudyScoped, generics.ListAPIView):
    """Participants with their assignments (scenario, system, position, session). Enrol with POST
    .../enrol/."""

    serializer_class = s.ParticipantSerializer
    filters = PARTICIPANT_FILTERS
    # A preview's participant is not one of the study's (studies/design/lifecycle.py): listed when asked.
    preview_lookup = "preview_at"

    def get_queryset(self):
        return participants_with_assignments(self.study)


class ParticipantDetail(StudyScoped, generics.RetrieveAPIView):
    serializer_class = s.ParticipantSerializer

    def get_queryset(self):
        # A preview's participant is not one of the study's (studies/design/lifecycle.py).
        return participants_with_assignments(self.study).filter(preview_at__isnull=True)


class ParticipantEnrol(StudyScoped, APIView):
    """Enrol `count` participants: each gets the next row of the balanced plan, rows freed by attrition
    first."""

    pagination_class = None  # answers a plain list; the schema said a paginated page

    @extend_schema(request=s.EnrolSerializer, responses={201: s.ParticipantSerializer(many=True)})
    def post(self, request, study_pk):
        data = s.EnrolSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        arrival_sweep(study=self.study)  # the overdue's rows are freed first, beat or not
        try:
            enrolled = services.participants_enrol(study=self.study, count=data.validated_data["count"])
        except DesignError as error:
            return conflict(str(error))
        participants = participants_with_assignments(self.study).filter(pk__in=[p.pk for p in enrolled])
        return Response(s.ParticipantSerializer(participants, many=True).data, status=status.HTTP_201_CREATED)


class ParticipantWithdraw(StudyScoped, APIView):
    """Withdraw a participant on their behalf: their data is deleted, an audit entry records that it
    happened."""

    @extend_schema(request=None, responses={200: s.ParticipantSerializer})
    def post(self, request, study_pk, pk):
        participant = get_object_or_404(Participant, study=self.study, pk=pk)
        participant_withdraw(participant=participant, by="researcher")
        return Response(s.ParticipantSerializer(participants_with_assignments(self.study).get(pk=pk)).data)
