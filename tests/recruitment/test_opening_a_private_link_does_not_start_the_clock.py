"""A GET of a private link (a mail scanner, a link checker, the participant only reading) starts no clock and
changes no state; the participant's first act (consent) starts the study clock."""

from datetime import timedelta

import pytest
from django.utils import timezone

from studies.kernel.states import state_of
from studies.models import AuditEntry, Participant, Recruitment
from studies.participation.recruitment.states import participant_deadline

from .conftest import cid

pytestmark = pytest.mark.django_db


def test_two_gets_then_a_consent_start_the_clock_at_the_consent(client, participant):
    Recruitment.objects.create(study=participant.study, time_limit_minutes=30)
    for _ in range(2):
        assert client.get(f"/p/{participant.access_token}/").status_code == 200
    participant.refresh_from_db()
    assert (participant.started_at, state_of(participant)) == (None, "invited")
    assert participant_deadline(participant, participant.study.recruitment) is None
    assert not AuditEntry.objects.filter(action="participant_state").exists()
    before = timezone.now()
    response = client.post(
        f"/p/{participant.access_token}/consent/",
        {
            "decision": "accept",
            "consent_version": participant.study.consent_version,
            "client_event_id": cid(),
        },
    )
    assert response.status_code == 302
    participant = Participant.objects.get(pk=participant.pk)
    assert participant.started_at >= before and participant.started_at == participant.consented_at
    assert state_of(participant) == "started"
    deadline = participant_deadline(participant, participant.study.recruitment)
    assert deadline == participant.consented_at + timedelta(minutes=30)


def test_a_get_long_after_enrolment_times_no_one_out(client, participant):
    Recruitment.objects.create(study=participant.study, time_limit_minutes=30)
    Participant.objects.filter(pk=participant.pk).update(created_at=timezone.now() - timedelta(days=3))
    client.get(f"/p/{participant.access_token}/")
    assert state_of(Participant.objects.get(pk=participant.pk)) == "invited"
