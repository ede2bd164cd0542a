"""Reconciliation explains every state pair that is a normal outcome (timed out here and returned or timed out
on the panel, withdrawn here and returned there, screened out here and paid at the screening rate there, ...)
instead of listing it as a disagreement; real disagreements are still listed."""

from datetime import timedelta

import pytest
from django.utils import timezone

from studies.models import Participant
from studies.participation.recruitment.panel_reconciliation import (
    NORMAL_PAIRS,
    reconciliation,
    reconciliation_explained,
)
from studies.participation.recruitment.panel_status import panel_status_record
from studies.participation.recruitment.states import FREEING, participant_screen_out, participant_state_sync
from studies.participation.recruitment.sweep import overdue_time_out
from studies.participation.way.steps import participant_withdraw

from .conftest import finish, join, ready

pytestmark = pytest.mark.django_db


def timed_out(study):
    person = join(study).participant
    ready(person)
    Participant.objects.filter(pk=person.pk).update(started_at=timezone.now() - timedelta(hours=2))
    overdue_time_out(study=study)
    return Participant.objects.get(pk=person.pk)


def panel_says(study, person, status, key):
    panel_status_record(study=study, key=key, panel_id=person.panel_id, status=status)


@pytest.mark.parametrize("status", ["returned", "timed_out"])
def test_timed_out_here_and_left_on_the_panel_is_a_normal_outcome(panel_study, status):
    person = timed_out(panel_study)
    assert person.state == "timed_out"
    panel_says(panel_study, person, status, "n1")
    assert reconciliation(study=panel_study) == []
    if status == "returned":
        [row] = reconciliation_explained(study=panel_study)
        assert (row.participant_code, row.ours, row.panel) == (person.code, "timed_out", "returned")
        assert row.reason == "timed out here (the study time limit), and returned the submission on the panel"


def test_withdrawn_here_and_returned_there_is_explained(panel_study):
    person = join(panel_study).participant
    participant_withdraw(participant=person)
    panel_says(panel_study, person, "returned", "n1")
    assert reconciliation(study=panel_study) == []


@pytest.mark.parametrize("status", ["returned", "timed_out", "awaiting_review", "approved", "rejected"])
def test_screened_out_here_is_explained_whatever_the_panel_did_with_the_code(panel_study, status):
    person = join(panel_study).participant
    participant_screen_out(participant=person, reason="comprehension", failed_checks=True)
    panel_says(panel_study, person, status, "n1")
    assert reconciliation(study=panel_study) == []
    assert [row.panel for row in reconciliation_explained(study=panel_study)] == [status]


def test_real_disagreements_are_still_listed(panel_study):
    done = finish(join(panel_study).participant)
    participant_state_sync(participant=Participant.objects.get(pk=done.pk))
    panel_says(panel_study, done, "rejected", "n1")
    gone = timed_out(panel_study)
    panel_says(panel_study, gone, "approved", "n2")  # a submission without a completion code
    reasons = {row.participant_code: row.reason for row in reconciliation(study=panel_study)}
    assert reasons == {
        done.code: "completed here, rejected on the panel",
        gone.code: "the panel has a submission, ours is timed_out: approve only with a completion code",
    }
    assert reconciliation_explained(study=panel_study) == []


def test_every_normal_pair_is_one_where_we_ended_and_the_panel_did_not_pay_for_data(panel_study):
    for (ours, theirs), explanation in NORMAL_PAIRS.items():
        assert ours in FREEING and explanation
        assert theirs != "approved" or ours == "screened_out"


def test_the_page_lists_the_normal_outcomes_apart(client, alice, panel_study):
    person = timed_out(panel_study)
    panel_says(panel_study, person, "returned", "n1")
    client.force_login(alice)
    html = client.get(f"/studies/{panel_study.slug}/recruitment/reconciliation/").content.decode()
    assert "Disagreements (0)" in html and "Normal outcomes (1)" in html
    assert "timed out here (the study time limit), and returned the submission on the panel" in html
