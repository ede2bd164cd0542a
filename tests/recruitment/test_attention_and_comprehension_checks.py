"""Attention and comprehension checks as study settings, before the first scenario: each answer is recorded
with its outcome and reason; Prolific's preset rejects only after two failed attention checks and gives a
comprehension check a second chance; past the limit the participant is screened out and receives the
failed-checks (or screened-out) code."""

import pytest

from studies.errors import RecruitmentError, Refused
from studies.kernel.states import state_of
from studies.models import Event, Participant, Recruitment
from studies.participation.recruitment.completion import completion_of
from studies.participation.recruitment.panels import recruitment_update
from studies.participation.way.check_answers import check_answer_record
from studies.participation.way.form_steps import session_start

from .conftest import cid, join, ready

pytestmark = pytest.mark.django_db

CHECKS = [
    {
        "name": "attention_1",
        "kind": "attention",
        "label": "Choose Blue.",
        "choices": ["Red", "Blue"],
        "answer": "Blue",
    },
    {
        "name": "understood",
        "kind": "comprehension",
        "label": "What do you judge?",
        "choices": ["Documents", "People"],
        "answer": "Documents",
    },
    {
        "name": "attention_2",
        "kind": "attention",
        "label": "Choose Red.",
        "choices": ["Red", "Blue"],
        "answer": "Red",
    },
]


@pytest.fixture
def checked(panel_study):
    recruitment_update(study=panel_study, checks={"preset": "prolific", "items": CHECKS})
    participant = join(panel_study).participant
    return ready(participant)


def answer(participant, name, value):
    return check_answer_record(
        participant=Participant.objects.get(pk=participant.pk), name=name, answer=value, client_event_id=cid()
    )


def test_the_checks_come_before_the_first_scenario(client, checked):
    html = client.get(f"/p/{checked.access_token}/").content.decode()
    assert 'id="check-form"' in html and "Choose Blue." in html
    first = checked.assignments.order_by("position").first()
    with pytest.raises(Refused, match="questions before the tasks"):
        session_start(participant=checked, assignment=first, client_event_id=cid())


def test_passing_every_check_leads_to_the_tasks(client, checked):
    for item in CHECKS:
        client.post(
            f"/p/{checked.access_token}/check/",
            {"check": item["name"], "answer": item["answer"], "client_event_id": cid()},
        )
    assert 'id="start-search"' in client.get(f"/p/{checked.access_token}/").content.decode()
    assert Event.objects.filter(participant=checked, type="check", payload__ack__passed=True).count() == 3


def test_one_failed_attention_check_is_recorded_with_its_reason_and_the_study_goes_on(checked):
    ack = answer(checked, "attention_1", "Red")
    assert not ack["passed"] and ack["reason"] == "attention check attention_1: answered 'Red'"
    assert state_of(Participant.objects.get(pk=checked.pk)) == "started"


def test_two_failed_attention_checks_screen_out_with_the_failed_checks_code(client, checked):
    answer(checked, "attention_1", "Red")
    answer(checked, "understood", "Documents")
    ack = answer(checked, "attention_2", "Blue")
    assert ack["screened_out"]
    participant = Participant.objects.get(pk=checked.pk)
    assert participant.state == "screened_out" and participant.state_reason.startswith(
        "failed checks: 2 attention"
    )
    completion = completion_of(participant)
    assert completion.kind == "failed_checks"
    assert completion.code == Recruitment.objects.get(study=participant.study).code_failed_checks
    html = client.get(f"/p/{participant.access_token}/").content.decode()
    assert "not for you" in html and 'id="completion"' in html


def test_a_comprehension_check_has_a_second_chance(client, checked):
    answer(checked, "attention_1", "Blue")
    assert not answer(checked, "understood", "People")["passed"]
    assert 'id="check-retry"' in client.get(f"/p/{checked.access_token}/").content.decode()
    assert answer(checked, "understood", "Documents")["passed"]


def test_a_comprehension_check_failed_twice_screens_out_with_the_screened_out_code(checked):
    answer(checked, "understood", "People")
    assert answer(checked, "understood", "People")["screened_out"]
    participant = Participant.objects.get(pk=checked.pk)
    assert completion_of(participant).kind == "screened_out"


def test_a_screened_out_participant_s_row_is_freed(checked):
    recruitment_update(study=checked.study, checks={"preset": "strict", "items": CHECKS})
    answer(checked, "attention_1", "Red")
    assert join(checked.study).participant.plan_row == checked.plan_row


def test_a_re_sent_answer_returns_the_first_outcome(checked):
    event_id = cid()
    first = check_answer_record(
        participant=checked, name="attention_1", answer="Red", client_event_id=event_id
    )
    again = check_answer_record(
        participant=checked, name="attention_1", answer="Blue", client_event_id=event_id
    )
    assert first == again and Event.objects.filter(participant=checked, type="check").count() == 1


def test_an_unknown_or_answered_check_is_refused(client, checked):
    answer(checked, "attention_1", "Blue")
    with pytest.raises(Refused):
        answer(checked, "attention_1", "Blue")
    response = client.post(
        f"/p/{checked.access_token}/check/", {"check": "<x>", "answer": "\x00", "client_event_id": cid()}
    )
    assert response.status_code == 409


@pytest.mark.parametrize(
    "checks, message",
    [
        ({"preset": "lenient", "items": CHECKS}, "preset"),
        ({"items": [{**CHECKS[0], "answer": "Green"}]}, "answer must be one of its choices"),
        ({"items": [{**CHECKS[0], "kind": "trick"}]}, "kind is attention or comprehension"),
        ({"items": [CHECKS[0], CHECKS[0]]}, "once"),
        ({"items": [{**CHECKS[0], "choices": ["only"]}]}, "choices are 2-20"),
        ({"items": [{**CHECKS[0], "extra": 1}]}, "unknown key"),
        ({"items": "all"}, "a list"),
        # A name that is a list is refused like any bad name, not hashed (which raised a TypeError).
        ({"items": [{**CHECKS[0], "name": ["x"]}]}, "check 1: name is 1-64"),
    ],
)
def test_a_malformed_check_setting_is_refused_with_its_item(panel_study, checks, message):
    with pytest.raises(RecruitmentError, match=message):
        recruitment_update(study=panel_study, checks=checks)


def test_the_researcher_sets_checks_on_the_page(client, alice, panel_study):
    import json

    client.force_login(alice)
    found = Recruitment.objects.get(study=panel_study)
    response = client.post(
        f"/studies/{panel_study.slug}/recruitment/",
        {
            "panel": "prolific",
            "code_completed": found.code_completed,
            "code_screened_out": found.code_screened_out,
            "code_failed_checks": found.code_failed_checks,
            "checks_preset": "strict",
            "checks_items": json.dumps(CHECKS[:1]),
        },
    )
    assert response.status_code == 302
    assert Recruitment.objects.get(study=panel_study).checks == {"preset": "strict", "items": CHECKS[:1]}
    bad = client.post(
        f"/studies/{panel_study.slug}/recruitment/",
        {
            "panel": "prolific",
            "code_completed": "A1",
            "code_screened_out": "A2",
            "code_failed_checks": "A3",
            "checks_items": "[" * 3000,
        },
        follow=True,
    )
    assert bad.status_code == 200 and "checks_items" in bad.content.decode()
