"""The study page shows every participant's state (and why), never a completed mark for a withdrawn
participant's task, and a balance table of planned / completed / active / freed / re-issued per cell, with
attrition per system and a warning when it differs between systems."""

import re

import pytest

from studies.design.selectors import study_balance
from studies.models import Participant
from studies.participation.recruitment.states import participant_state_set, participant_state_sync
from studies.participation.way.form_steps import consent_decline
from studies.participation.way.steps import participant_withdraw

from .conftest import cid, finish, join, start

pytestmark = pytest.mark.django_db


def page(client, alice, study):
    client.force_login(alice)
    response = client.get(f"/studies/{study.slug}/")
    assert response.status_code == 200
    return response.content.decode()


def row_of(html, code):
    return re.search(rf"<tr class=\"state-[a-z_]+\"><td>{code}\b.*?</tr>", html, re.S).group(0)


def test_each_participant_s_state_is_shown(client, alice, panel_study):
    enrolled = panel_study.participants.get(enrolment_index=0)
    consent_decline(participant=enrolled, client_event_id=cid())
    participant_state_sync(participant=Participant.objects.get(pk=enrolled.pk))
    returned = join(panel_study).participant
    participant_state_set(participant=returned, state="returned", reason="panel: returned")
    html = page(client, alice, panel_study)
    assert "Withdrawn" in row_of(html, enrolled.code) and "declined consent" in row_of(html, enrolled.code)
    assert "Invited" in row_of(html, "P002")
    assert "Returned" in row_of(html, returned.code) and "(panel)" in row_of(html, returned.code)


def test_a_withdrawn_participant_s_finished_task_has_no_completed_mark(client, alice, panel_study):
    participant = finish(panel_study.participants.get(enrolment_index=0))
    participant_withdraw(participant=participant)
    row = row_of(page(client, alice, panel_study), participant.code)
    assert "✓" not in row and row.count("(withdrawn)") == 4


def test_the_balance_counts_freed_and_re_issued_rows(client, alice, panel_study):
    left = join(panel_study).participant
    start(left)
    participant_state_set(participant=left, state="returned", reason="panel")
    taker = join(panel_study).participant
    start(taker)
    table = study_balance(study=panel_study)
    first = left.assignments.get(position=1)
    cell = table.by_system[(first.scenario_id, first.system_id)]
    # Two enrolled rows and the first arrival's planned; the leaver's freed; the taker's re-issued and active.
    assert (cell.freed, cell.reissued, cell.active) == (1, 1, 1)
    html = page(client, alice, panel_study)
    assert re.search(r"<td>\d+ / \d+ / \d+ / \d+ / \d+</td>", html)
    assert 'id="attrition-by-system"' in html


def test_attrition_that_differs_between_systems_is_warned_of(panel_study):
    arrivals = [join(panel_study).participant for _ in range(12)]
    for participant in arrivals:  # those who begin on B leave during it; those who begin on A carry on
        session = start(participant)
        if session.assignment.system.code == "B":
            participant_state_set(participant=participant, state="returned", reason="panel")
    table = study_balance(study=panel_study)
    rates = {a.system.code: a.rate for a in table.attrition}
    assert rates["B"] == 1.0 and rates["A"] == 0.0
    assert "Attrition differs between systems (A: 0%, B: 100%)" in table.attrition_warning
