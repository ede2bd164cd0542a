"""A study with participants from Prolific, for the tests of where panel ids go: P001 (completed, approved,
from tests/interchange/participants_helpers.py, with ids of its own here), P002 withdrawn, P003 enrolled by
the researcher, and P004 who arrived by the public link with Prolific's three ids and was screened out by a
failed check."""

import csv
import io
import zipfile

from django.test import Client
from django.utils import timezone

from studies.models import Participant, ParticipantState, Recruitment
from studies.participation.recruitment.states import participant_state_set
from tests.interchange.participants_helpers import study_with_varied_participants

# P001's ids and P004's, as the public link stores them: texts found nowhere else in an export.
FIRST_IDS = ("5f" + "0" * 22, "STUDYP1K8", "SESSIONP1K8")
ARRIVAL_IDS = ("65a1b2c3d4e5f60718293a4b", "STUDYQ7X9", "SESSIONQ7X9")
PANEL_ID_COLUMNS = ["panel_id", "panel_study_id", "panel_session_id"]


def study_with_panel_arrivals(study, alice) -> Participant:
    """`study` (worked) made as above; returns P004, the arrival."""
    first, _second, _third = study_with_varied_participants(study, alice)
    Participant.objects.filter(pk=first.pk).update(panel_study_id=FIRST_IDS[1], panel_session_id=FIRST_IDS[2])
    recruitment = Recruitment.objects.get(study=study)
    pid, study_id, session_id = ARRIVAL_IDS
    response = Client().get(
        f"/join/{recruitment.public_token}/",
        {"PROLIFIC_PID": pid, "STUDY_ID": study_id, "SESSION_ID": session_id},
    )
    assert response.status_code == 302, response.content
    arrival = Participant.objects.get(study=study, panel_id=pid)
    participant_state_set(
        participant=arrival,
        state=ParticipantState.SCREENED_OUT,
        reason="failed checks: attention_1",
        now=timezone.now(),
    )
    return Participant.objects.get(pk=arrival.pk)


def every_id() -> list[str]:
    """Each panel id the study's participants hold (the ones a shared file must not carry)."""
    return [*FIRST_IDS, *ARRIVAL_IDS]


def zip_texts(body: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(body)) as zipped:
        return {name: zipped.read(name).decode("utf-8") for name in zipped.namelist()}


def csv_rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def body_of(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content
