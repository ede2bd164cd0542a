"""Researcher enrolment and public arrivals share one plan: an enrolment after arrivals (some of them on
re-issued rows) takes the next fresh rows, leaving no row unissued and none twice."""

import pytest

from studies.design import services
from studies.participation.recruitment.states import participant_state_set

from .conftest import join

pytestmark = pytest.mark.django_db


def test_enrolment_after_a_re_issue_continues_the_plan(panel_study):
    first = join(panel_study).participant  # row 2
    participant_state_set(participant=first, state="returned", reason="panel")
    assert join(panel_study).participant.plan_row == 2  # re-issued
    enrolled = services.participants_enrol(study=panel_study, count=2)
    assert [p.plan_row for p in enrolled] == [3, 4]
    assert [p.enrolment_index for p in enrolled] == [4, 5]
    assert join(panel_study).participant.plan_row == 5
