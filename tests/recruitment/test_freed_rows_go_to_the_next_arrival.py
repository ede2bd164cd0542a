"""The attrition-aware Latin square: a row freed by a return, a time-out, a screen-out or a withdrawal goes to
the next arrival (least held first, then the lowest row), once; the original holder keeps their assignment
(intention to treat); otherwise the next fresh row of the plan."""

from datetime import timedelta

import pytest
from django.db import IntegrityError
from django.utils import timezone

from studies.design.latin_square import participant_assignment, row_to_issue
from studies.design.rows import row_counts
from studies.errors import Refused
from studies.models import Participant, Recruitment
from studies.participation.recruitment.panel_status import panel_status_record
from studies.participation.recruitment.states import participant_state_set, participant_state_sync
from studies.participation.recruitment.sweep import study_sweep
from studies.participation.way.steps import participant_withdraw

from .conftest import join, ready

pytestmark = pytest.mark.django_db


def orders(participant):
    return [(a.scenario.code, a.system.code) for a in participant.assignments.order_by("position")]


def test_without_attrition_arrivals_take_fresh_rows(panel_study):
    rows = [join(panel_study).participant.plan_row for _ in range(3)]
    assert rows == [2, 3, 4]


def test_a_returned_participant_s_row_goes_to_the_next_arrival(panel_study):
    first = join(panel_study, "a" * 24).participant
    panel_status_record(study=panel_study, key="n1", panel_id=first.panel_id, status="returned")
    joined = join(panel_study)
    assert joined.participant.plan_row == first.plan_row and joined.reissued_from == first.pk
    assert orders(joined.participant) == orders(first)
    # The original assignment stays recorded: intention to treat.
    first.refresh_from_db()
    assert first.state == "returned" and first.assignments.count() == 4
    assert join(panel_study).participant.plan_row == 3  # freed once, re-issued once


@pytest.mark.parametrize("ending", ["timed_out", "screened_out", "withdrawn"])
def test_every_ending_that_frees_a_row_re_issues_it(panel_study, ending):
    first = join(panel_study).participant
    if ending == "withdrawn":
        participant_withdraw(participant=first)
        participant_state_sync(participant=Participant.objects.get(pk=first.pk))
    else:
        participant_state_set(participant=first, state=ending, reason="test")
    assert join(panel_study).participant.plan_row == first.plan_row


def test_an_enrolled_participant_who_withdraws_frees_their_row_too(panel_study):
    enrolled = panel_study.participants.get(enrolment_index=1)
    participant_withdraw(participant=enrolled)
    study_sweep(study=panel_study)
    assert join(panel_study).participant.plan_row == 1


def test_of_two_freed_rows_the_lowest_goes_first(panel_study):
    a, b = join(panel_study).participant, join(panel_study).participant  # rows 2, 3
    participant_state_set(participant=b, state="returned", reason="panel")
    participant_state_set(participant=a, state="returned", reason="panel")
    assert [join(panel_study).participant.plan_row for _ in range(3)] == [2, 3, 4]


def test_an_active_participant_past_the_cutoff_no_longer_holds_a_row(panel_study):
    stale = join(panel_study).participant
    Participant.objects.filter(pk=stale.pk).update(started_at=timezone.now() - timedelta(minutes=61))
    counts = row_counts(study=panel_study)
    assert counts.holders[stale.plan_row] == 0 and counts.active[stale.plan_row] == 0
    study_sweep(study=panel_study)
    assert join(panel_study).participant.plan_row == stale.plan_row


def test_a_participant_who_started_within_the_cutoff_holds_their_row(panel_study):
    live = join(panel_study).participant
    ready(live)
    counts = row_counts(study=panel_study)
    assert counts.holders[live.plan_row] == 1 and counts.active[live.plan_row] == 1
    assert join(panel_study).participant.plan_row == live.plan_row + 1


def test_a_row_is_re_issued_once_whatever_writes_it(panel_study):
    first = join(panel_study).participant
    participant_state_set(participant=first, state="returned", reason="panel")
    join(panel_study)
    with pytest.raises(IntegrityError):
        Participant.objects.create(
            study=panel_study, code="X", enrolment_index=99, plan_row=first.plan_row, reissue_of=first
        )


def test_a_closed_study_takes_no_one_and_a_closed_cell_skips_its_rows(panel_study):
    recruitment_row = Recruitment.objects.get(study=panel_study)
    scenarios = list(panel_study.scenarios.order_by("id"))
    systems = list(panel_study.systems.order_by("id"))
    closed = participant_assignment(scenarios, systems, 2)[0]
    recruitment_row.closed_cells = [[closed[0].code, closed[1].code]]
    recruitment_row.save(update_fields=["closed_cells"])
    row = join(panel_study).participant.plan_row
    assert row != 2 and (closed[0], closed[1]) not in participant_assignment(scenarios, systems, row)
    recruitment_row.closed_cells = [[s.code, y.code] for s in scenarios for y in systems]
    recruitment_row.save(update_fields=["closed_cells"])
    with pytest.raises(Refused, match="not taking"):  # every row touches a closed cell: full
        join(panel_study)


def test_the_pure_rule_takes_the_least_held_then_lowest_then_oldest():
    assert row_to_issue(holders={}, freed=[], next_fresh=5) == (5, None)
    assert row_to_issue(holders={3: 1, 1: 0}, freed=[(3, "a"), (1, "b")], next_fresh=9) == (1, "b")
    assert row_to_issue(holders={}, freed=[(4, "a"), (2, "b"), (2, "c")], next_fresh=9) == (2, "b")
    assert row_to_issue(holders={}, freed=[(4, "a")], next_fresh=9, closed_rows={4, 9, 10}) == (11, None)
