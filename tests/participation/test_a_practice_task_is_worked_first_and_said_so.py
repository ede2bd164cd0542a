"""A participant of a study with a practice scenario meets it first, told it is practice and not scored, then
the counterbalanced tasks, numbered from 1 as if there were no practice task (it is not one of them)."""

import pytest

from studies.design import services
from studies.participation.way.form_steps import post_task_save, session_start
from studies.participation.way.steps import session_end
from tests.participation.conftest import cid, ready

pytestmark = pytest.mark.django_db


def test_the_practice_task_comes_first_and_says_it_is_not_scored(client, designed_study):
    services.scenario_add(
        study=designed_study, code="WARM", title="Warm-up", text="Find anything.", topic_id="0", practice=True
    )
    [participant] = services.participants_enrol(study=designed_study, count=1)
    ready(participant)
    page = client.get(f"/p/{participant.access_token}/").content.decode()
    assert "Warm-up" in page and "Practice task (for getting used to the search; not scored)" in page
    first = participant.assignments.order_by("position").first()
    session = session_start(participant=participant, assignment=first, client_event_id=cid())
    session_end(participant=participant, session=session, reason="gave_up", client_event_id=cid())
    post_task_save(
        participant=participant, session=session, answers={"search_went_well": 3}, client_event_id=cid()
    )
    page = client.get(f"/p/{participant.access_token}/").content.decode()
    assert "Search task 1 of 4" in page and "Practice task" not in page
