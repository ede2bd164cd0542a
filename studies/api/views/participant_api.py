"""The participant's own endpoints (a participant token): who they are, starting a session, logging events."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from studies.api import serializers as s
from studies.api.permissions import IsParticipant, ParticipantTokenAuthentication
from studies.api.views.common import (
    ApiViewBase,
    conflict,
)
from studies.api.views.participants import participants_with_assignments
from studies.api.views.sessions import sessions_with_design
from studies.errors import InvalidEvent, Refused
from studies.models import (
    Assignment,
    Participant,
)
from studies.participation.events import clock
from studies.participation.way.form_steps import session_start
from studies.participation.way.steps import body_too_large, events_ingest, too_many_events

if TYPE_CHECKING:
    from studies.api.views.common import PermissionClasses


class ParticipantScoped(ApiViewBase):
    authentication_classes: Sequence[type[BaseAuthentication]] = [ParticipantTokenAuthentication]
    permission_classes: PermissionClasses = [IsParticipant]

    @property
    def participant(self) -> Participant:
        return cast(Participant, self.request.auth)  # what ParticipantTokenAuthentication puts there


class ParticipantMe(ParticipantScoped, APIView):
    """Who the token belongs to: the participant's code, study and assignments (with session ids)."""

    @extend_schema(responses=s.ParticipantMeSerializer)
    def get(self, request):
        participant = (
            participants_with_assignments(self.participant.study)
            .select_related("study")
            .get(pk=self.participant.pk)
        )
        return Response(s.ParticipantMeSerializer(participant).data)


class ParticipantSessionStart(ParticipantScoped, APIView):
    """Start (or resume) the session of the assignment at `assignment` (its position in the order); the
    participant must have consented and answered the questionnaire, and works the scenarios in order."""

    @extend_schema(request=s.SessionStartSerializer, responses={201: s.SessionSerializer})
    def post(self, request):
        data = s.SessionStartSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        assignment = Assignment.objects.filter(
            participant=self.participant, position=data.validated_data["assignment"]
        ).first()
        if assignment is None:
            raise ValidationError({"assignment": "no assignment at this position"})
        try:
            session = session_start(
                participant=self.participant,
                assignment=assignment,
                client_event_id=data.validated_data["client_event_id"],
                client_time=data.validated_data.get("time"),
            )
        except Refused as refusal:
            return conflict(refusal.message)
        except InvalidEvent as error:
            raise ValidationError({"client_event_id": str(error)}) from None
        return Response(
            s.SessionSerializer(sessions_with_design(self.participant.study).get(pk=session.pk)).data,
            status=status.HTTP_201_CREATED,
        )


class ParticipantEvents(ParticipantScoped, APIView):
    """Log a batch of client events (at most 200), each stored once by its client event id: a re-sent batch
    stores nothing twice and gets the same acknowledgements. Events are those of the built-in interface
    (studies/participation/way/steps.py); only the participant's own sessions are accepted."""

    @extend_schema(request=s.EventBatchDocSerializer, responses={200: s.AckBatchSerializer})
    def post(self, request):
        received_at = timezone.now()
        # The page's limit, before the body is read (DRF's own, DATA_UPLOAD_MAX_MEMORY_SIZE, is larger).
        if too_large := body_too_large(request.META.get("CONTENT_LENGTH")):
            return Response({"events": too_large}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        # Only the batch's shape is checked here: each event is checked on its own
        # (studies/participation/events/event_checks.py), so one malformed event gets its own refusal and the
        # others are stored.
        events = request.data.get("events") if isinstance(request.data, dict) else None
        if not isinstance(events, list) or not events:
            raise ValidationError({"events": 'expected {"events": [one or more events]}'})
        if too_many := too_many_events(events):
            return Response({"events": too_many}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        # The batch's send time and the last round trip: the client's clock offset (docs/time-model.md).
        clock_sample, clock_refused = clock.batch_sample(request.data.get("clock"), received_at=received_at)
        acks = events_ingest(participant=self.participant, events=events, clock_sample=clock_sample)
        if "clock" not in request.data:
            return Response({"acks": acks})
        return Response({"acks": acks, "clock": clock.answer(received_at, timezone.now(), clock_refused)})
