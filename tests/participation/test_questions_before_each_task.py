"""A study's questions before each task: asked before the scenario's session starts, once per assignment,
stored on the assignment with a `pre_task` Event; none asked when the study has none."""

import pytest

from studies.errors import InvalidAnswers, Refused
from studies.kernel.steps import participant_step
from studies.models import Event, SearchSession
from studies.participation.way.form_steps import (
    post_task_save,
    pre_task_save,
    questionnaire_items,
    session_start,
)
from studies.participation.way.steps import participant_withdraw, session_end

from .conftest import cid, ready

ITEMS = [
    {
        "name": "familiarity",
        "label": "How familiar are you with this topic?",
        "kind": "scale",
        "min": 1,
        "max": 5,
    },
    {"name": "expect", "label": "What do you expect to find?", "kind": "text", "required": False},
]


@pytest.fixture
def asking(participant):
    study = participant.study
    study.pre_task_questionnaire = ITEMS
    study.save(update_fields=["pre_task_questionnaire"])
    return ready(participant)


def test_the_questions_come_before_the_scenario_starts(client, asking):
    page = client.get(f"/p/{asking.access_token}/")
    assert page.status_code == 200 and b'id="pre-task"' in page.content
    assert b"How familiar are you with this topic?" in page.content
    first = asking.assignments.get(position=1)
    # Starting the search first is refused: the questions come first.
    started = client.post(
        f"/p/{asking.access_token}/start/", {"assignment": first.pk, "client_event_id": cid()}
    )
    assert started.status_code == 409 and b"questions before this task" in started.content
    assert not SearchSession.objects.exists()

    form = {
        "assignment": first.pk,
        "client_event_id": "pre-1",
        "sequence": "4",
        "familiarity": "2",
        "expect": "wings",
    }
    assert client.post(f"/p/{asking.access_token}/pre-task/", form).status_code == 302
    first.refresh_from_db()
    assert first.pre_task_answers == {"familiarity": 2, "expect": "wings"}
    event = Event.objects.get(type="pre_task")
    assert event.session_id is None and event.sequence == 4
    assert event.payload["data"] == {"assignment": 1, "answers": {"familiarity": 2, "expect": "wings"}}
    # A re-sent form changes nothing; the scenario page comes next, and the search starts.
    assert client.post(f"/p/{asking.access_token}/pre-task/", form).status_code == 302
    assert Event.objects.filter(type="pre_task").count() == 1
    assert b'id="start-search"' in client.get(f"/p/{asking.access_token}/").content
    session_start(participant=asking, assignment=first, client_event_id=cid())
    assert SearchSession.objects.filter(assignment=first).exists()


def test_wrong_answers_show_the_page_again_with_a_message(client, asking):
    first = asking.assignments.get(position=1)
    response = client.post(
        f"/p/{asking.access_token}/pre-task/",
        {"assignment": first.pk, "client_event_id": cid(), "familiarity": "9"},
    )
    assert response.status_code == 400 and b"from 1 to 5" in response.content
    first.refresh_from_db()
    assert first.pre_task_answers == {} and not Event.objects.filter(type="pre_task").exists()


def test_refusals_out_of_order_twice_or_when_none_are_asked(asking, other_participant):
    first, second = (asking.assignments.get(position=n) for n in (1, 2))
    with pytest.raises(Refused, match="in the order given"):
        pre_task_save(
            participant=asking, assignment=second, answers={"familiarity": 3}, client_event_id=cid()
        )
    with pytest.raises(Refused, match="not one of your scenarios"):
        pre_task_save(
            participant=asking,
            assignment=other_participant.assignments.get(position=1),
            answers={"familiarity": 3},
            client_event_id=cid(),
        )
    with pytest.raises(InvalidAnswers):
        pre_task_save(participant=asking, assignment=first, answers={}, client_event_id=cid())
    pre_task_save(participant=asking, assignment=first, answers={"familiarity": 3}, client_event_id=cid())
    with pytest.raises(Refused, match="already answered"):
        pre_task_save(participant=asking, assignment=first, answers={"familiarity": 4}, client_event_id=cid())
    # The second task asks again, once the first is done.
    session = session_start(participant=asking, assignment=first, client_event_id=cid())
    session_end(participant=asking, session=session, reason="satisfied", client_event_id=cid())
    items = questionnaire_items(study=asking.study, post_task=True)
    post_task_save(
        participant=asking,
        session=session,
        client_event_id=cid(),
        answers={item["name"]: item.get("min", 1) for item in items},
    )
    step = participant_step(participant=asking)
    assert step.kind == "pre_task" and step.assignment.pk == second.pk


def test_a_study_without_questions_goes_straight_to_the_scenario(client, participant):
    ready(participant)
    first = participant.assignments.get(position=1)
    assert b'id="start-search"' in client.get(f"/p/{participant.access_token}/").content
    response = client.post(
        f"/p/{participant.access_token}/pre-task/",
        {"assignment": first.pk, "client_event_id": cid(), "familiarity": "3"},
    )
    assert response.status_code == 409
    first.refresh_from_db()
    assert first.pre_task_answers == {}


def test_withdrawal_deletes_the_answers(asking):
    first = asking.assignments.get(position=1)
    pre_task_save(participant=asking, assignment=first, answers={"familiarity": 3}, client_event_id=cid())
    participant_withdraw(participant=asking)
    first.refresh_from_db()
    assert first.pre_task_answers == {}
