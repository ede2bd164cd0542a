"""A researcher's withdrawal through the API frees the participant's row at once: the state is withdrawn in
the same transaction as the withdrawal, and the next arrival takes the row without any sweep in between."""

import pytest

from studies.models import AuditEntry, Participant
from studies.participation.way.steps import participant_withdraw
from tests.interchange.api_helpers import client_for

from .conftest import join, ready

pytestmark = pytest.mark.django_db


def test_the_api_s_withdrawal_frees_the_row_for_the_next_arrival(alice, panel_study):
    left = join(panel_study).participant
    ready(left)
    response = client_for(alice).post(f"/api/studies/{panel_study.pk}/participants/{left.pk}/withdraw/")
    assert response.status_code == 200 and response.json()["state"] == "withdrawn"
    left.refresh_from_db()
    assert (left.state, left.state_reason) == ("withdrawn", "withdrawn by the researcher")
    taker = join(panel_study)  # no sweep, no page load in between
    assert (taker.participant.plan_row, taker.reissued_from) == (left.plan_row, left.pk)


def test_the_participant_s_own_withdrawal_frees_it_at_once_too(panel_study):
    left = join(panel_study).participant
    participant_withdraw(participant=left)
    assert Participant.objects.get(pk=left.pk).state == "withdrawn"
    assert join(panel_study).reissued_from == left.pk


def test_a_withdrawal_rolled_back_leaves_the_state_as_it_was(panel_study, monkeypatch):
    left = join(panel_study).participant

    def audit_fails(*args, **kwargs):
        raise RuntimeError("audit store down")

    monkeypatch.setattr(AuditEntry.objects, "create", audit_fails)
    with pytest.raises(RuntimeError):
        participant_withdraw(participant=left)
    left.refresh_from_db()
    assert (left.state, left.withdrawn_at) == ("started", None)
