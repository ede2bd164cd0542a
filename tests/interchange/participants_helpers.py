"""A study whose participants differ in every participants.csv column, for the table's tests and
the archive's round trip of the same fields."""

import datetime as dt

from django.utils import timezone

from studies.assessment.exclusion import participant_exclude
from studies.design import lifecycle, services
from studies.models import Participant, ParticipantState, Recruitment
from studies.participation.recruitment.states import participant_state_set

QUESTIONNAIRE = [
    {"name": "age", "label": "Your age", "kind": "integer", "min": 18, "max": 99},
    {"name": "gender", "label": "Gender", "kind": "choice", "choices": ["woman", "man", "other"]},
    {"name": "state", "label": "Your state of mind", "kind": "text"},  # a name the table already uses
]


def study_with_varied_participants(study, alice):
    """`study` (worked: P001 with two sessions, P002 invited) made to hold: P001 completed, from Prolific,
    approved, excluded by Alice, with answers; P002 withdrawn with a reason; P003 enrolled on P002's freed
    row (a re-issue); and a preview participant, which no export writes."""
    study.questionnaire = QUESTIONNAIRE
    study.save(update_fields=["questionnaire"])
    Recruitment.objects.create(study=study, panel="prolific")
    first, second = study.participants.order_by("enrolment_index")
    when = timezone.now().replace(microsecond=250000) - dt.timedelta(minutes=30)
    first.questionnaire_answers = {"age": 34, "gender": "woman", "state": "calm", "hobbies": ["chess", "go"]}
    first.started_at = when - dt.timedelta(minutes=20)
    first.panel_id, first.panel_study_id, first.panel_session_id = "5f" + "0" * 22, "study-1", "session-1"
    first.panel_status, first.panel_status_at = "approved", when + dt.timedelta(minutes=5)
    first.save()
    participant_state_set(
        participant=first, state=ParticipantState.ACTIVE, now=when - dt.timedelta(minutes=19)
    )
    participant_state_set(
        participant=first, state=ParticipantState.COMPLETED, reason="all tasks done", now=when
    )
    participant_exclude(participant=first, by=alice, reason="answered at random")
    second.withdrawn_at = when
    second.save(update_fields=["withdrawn_at"])
    participant_state_set(
        participant=second, state=ParticipantState.WITHDRAWN, reason="asked to stop", now=when
    )
    [third] = services.participants_enrol(study=study, count=1)
    lifecycle.preview_start(study=study, by=alice)
    return Participant.objects.get(pk=first.pk), Participant.objects.get(pk=second.pk), third
