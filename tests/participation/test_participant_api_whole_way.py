"""An external front-end takes a participant the whole way through the participant API alone (docs/api.md,
"The whole way"): consent, questionnaire, the study's checks, and for every task the questions before it, its
session, its events, its two gold documents and its post-task questions, to done. Each call re-sent is stored
once and answered the same; bad answers are a 400 naming the question; a step out of order a 409; another
participant's session is refused; neither a check's answer nor which gold document is which is ever shown."""

import json

import pytest
from rest_framework.test import APIClient

from studies.assessment.references import reference_version_create
from studies.design import lifecycle
from studies.models import (
    Assignment,
    Document,
    Event,
    Judgment,
    Participant,
    Recruitment,
    ReferenceJudgment,
    SearchSession,
)
from studies.participation.recruitment.panels import recruitment_update

from .conftest import cid

pytestmark = pytest.mark.django_db

PRE_TASK = [
    {
        "name": "familiarity",
        "label": "How familiar are you with this topic?",
        "kind": "scale",
        "min": 1,
        "max": 5,
    },
    {"name": "expect", "label": "What do you expect to find?", "kind": "text", "required": False},
]
CHECK = {
    "name": "understood",
    "kind": "comprehension",
    "label": "What do you judge?",
    "choices": ["Documents", "People"],
    "answer": "Documents",
}
# Every topic: document 3 at the top grade and 9 judged 0: each task's gold pair is (3, 9).
JUDGED = {"3": 3, "2": 1, "9": 0}


@pytest.fixture
def study(running_study):
    """The running study with questions before each task, one comprehension check and gold documents on."""
    running_study.pre_task_questionnaire = PRE_TASK
    running_study.save(update_fields=["pre_task_questionnaire"])
    Recruitment.objects.create(study=running_study, panel="prolific")
    recruitment_update(study=running_study, checks={"preset": "prolific", "gold": True, "items": [CHECK]})
    documents = {d.external_id: d for d in Document.objects.filter(collection=running_study.collection)}
    reference_version_create(
        study=running_study,
        note="gold",
        judgments=[
            ReferenceJudgment(topic_id=scenario.topic_id, document=documents[doc], grade=grade, source="test")
            for scenario in running_study.scenarios.all()
            for doc, grade in JUDGED.items()
        ],
    )
    return running_study


def api_for(participant) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Participant {participant.access_token}")
    return api


def post(api, what: str, body: dict):
    return api.post(f"/api/participant/{what}/", body, format="json")


def step(api) -> dict:
    answer = api.get("/api/participant/step/")
    assert answer.status_code == 200, answer.content
    return answer.json()


def answers_for(items) -> dict:
    """A valid answer to each question, from what the step says about it."""
    by_kind = {
        "scale": lambda i: i["min"],
        "integer": lambda i: i.get("min", 1),
        "number": lambda i: i.get("min", 1),
        "choice": lambda i: i["choices"][0],
        "text": lambda i: "about wings",
    }
    return {item["name"]: by_kind[item["kind"]](item) for item in items}


def once(api, what: str, body: dict) -> dict:
    """Post an action twice with one client event id: the same answer both times, one event stored."""
    before = Event.objects.count()
    first = post(api, what, body)
    assert first.status_code == 200, first.content
    again = post(api, what, body)
    assert again.status_code == 200 and again.json() == first.json()
    assert Event.objects.count() == before + 1
    return first.json()["step"]


def no_secret(payload: dict) -> None:
    """Nothing a participant could read the check's answer or the gold pair's roles from."""
    text = json.dumps(payload)
    for key in ('"answer"', '"relevant"', '"off_topic"', '"passed"', '"relevant_grade"', '"reason"'):
        assert key not in text


def test_an_api_only_participant_goes_the_whole_way(study, participant):
    api = api_for(participant)
    now = step(api)
    assert now["kind"] == "consent"
    assert now["consent"] == {"text": study.consent_text, "version": study.consent_version}
    now = once(
        api,
        "consent",
        {
            "decision": "agree",
            "consent_version": study.consent_version,
            "client_event_id": "c-consent",
            "time": "2026-11-25T10:00:00Z",
        },
    )
    assert now["kind"] == "questionnaire" and now["items"]
    now = once(api, "questionnaire", {"answers": answers_for(now["items"]), "client_event_id": "c-q"})

    # The study's check comes before the first task, without its answer.
    assert now["kind"] == "checks" and now["assignment"] == 1
    assert now["check"] == {
        "name": "understood",
        "kind": "comprehension",
        "label": "What do you judge?",
        "choices": ["Documents", "People"],
    }
    no_secret(now)
    now = once(api, "checks", {"check": "understood", "answer": "Documents", "client_event_id": "c-check"})

    total = participant.assignments.count()
    for position in range(1, total + 1):
        assert now["kind"] == "pre_task" and now["assignment"] == position and now["total"] == total
        assert [i["name"] for i in now["items"]] == ["familiarity", "expect"]
        assert now["task"]["title"] and now["session"] is None
        # The session cannot start before the questions before its task.
        early = post(api, "sessions", {"assignment": position, "client_event_id": cid()})
        assert early.status_code == 409 and "questions before this task" in early.json()["detail"]
        now = once(
            api,
            "pre-task",
            {
                "assignment": position,
                "answers": {"familiarity": 2, "expect": "wings"},
                "client_event_id": f"pre-{position}",
            },
        )
        assert now["kind"] == "scenario" and now["assignment"] == position

        started = post(api, "sessions", {"assignment": position, "client_event_id": f"start-{position}"})
        assert started.status_code == 201, started.content
        session = started.json()["id"]
        now = step(api)
        assert now["kind"] == "search" and now["session"] == session and now["system_kind"] == "builtin"
        events = [
            {"id": f"q-{position}", "type": "query", "session": session, "data": {"text": "wing"}},
            {
                "id": f"end-{position}",
                "type": "session_end",
                "session": session,
                "data": {"reason": "satisfied"},
            },
        ]
        acks = api.post("/api/participant/events/", {"events": events[:1]}, format="json").json()["acks"]
        shown = acks[0]["results"][0]["doc"]
        events.insert(
            1,
            {
                "id": f"j-{position}",
                "type": "judgment",
                "session": session,
                "data": {"doc": shown, "grade": 2},
            },
        )
        acks = api.post("/api/participant/events/", {"events": events}, format="json").json()["acks"]
        assert [a["ok"] for a in acks] == [True, True, True]

        # The two gold documents, in this participant's order, never saying which is which.
        now = step(api)
        assert now["kind"] == "gold" and now["session"] == session
        assert sorted(d["doc"] for d in now["gold"]["documents"]) == ["3", "9"]
        assert all(d["title"] and d["text"] for d in now["gold"]["documents"])
        assert [g["value"] for g in now["gold"]["grade_levels"]] == [0, 1, 2, 3]
        no_secret(now)
        now = once(
            api, "gold", {"session": session, "grades": {"3": 3, "9": 0}, "client_event_id": f"g-{position}"}
        )
        no_secret(now)
        assert now["kind"] == "post_task" and now["session"] == session and now["items"]
        now = once(
            api,
            "post-task",
            {"session": session, "answers": answers_for(now["items"]), "client_event_id": f"post-{position}"},
        )

    assert now["kind"] == "done" and now["completion"]["kind"] == "completed"
    assert now["completion"]["code"] == Recruitment.objects.get(study=study).code_completed
    participant = Participant.objects.get(pk=participant.pk)
    assert participant.consented_at and participant.questionnaire_answers and participant.state == "completed"
    assert all(
        a.pre_task_answers == {"familiarity": 2, "expect": "wings"} for a in participant.assignments.all()
    )
    sessions = SearchSession.objects.filter(assignment__participant=participant)
    assert sessions.count() == total and all(s.post_task_answers for s in sessions)
    gold = Event.objects.filter(participant=participant, type="gold")
    assert gold.count() == total and all(e.payload["ack"]["passed"] for e in gold)
    # The gold grades never became the sessions' judgments:
    # one judgment per session, the one logged (grade 2).
    assert list(Judgment.objects.filter(session__in=sessions).values_list("grade", flat=True)) == [2] * total


def ready_by_api(api, study) -> dict:
    once(
        api,
        "consent",
        {"decision": "agree", "consent_version": study.consent_version, "client_event_id": cid()},
    )
    items = step(api)["items"]
    return once(api, "questionnaire", {"answers": answers_for(items), "client_event_id": cid()})


def test_bad_answers_are_a_400_naming_the_question_and_store_nothing(study, participant):
    api = api_for(participant)
    missing_version = post(api, "consent", {"decision": "agree", "client_event_id": cid()})
    assert missing_version.status_code == 400 and "consent_version" in missing_version.json()
    assert post(api, "consent", {"decision": "maybe", "client_event_id": cid()}).json().keys() == {"decision"}
    once(
        api,
        "consent",
        {"decision": "agree", "consent_version": study.consent_version, "client_event_id": cid()},
    )
    items = step(api)["items"]
    answers = answers_for(items)
    numeric = next(i for i in items if i["kind"] in ("integer", "scale"))
    bad = post(
        api, "questionnaire", {"answers": {**answers, numeric["name"]: "many"}, "client_event_id": cid()}
    )
    assert bad.status_code == 400 and list(bad.json()["answers"]) == [numeric["name"]]
    left_out = post(api, "questionnaire", {"answers": {}, "client_event_id": cid()})
    assert left_out.status_code == 400 and set(left_out.json()["answers"]) >= {
        i["name"] for i in items if i.get("required", True)
    }
    for body, field in [
        ({"answers": ["a list"], "client_event_id": cid()}, "answers"),
        ({"answers": {numeric["name"]: {"a": 1}}, "client_event_id": cid()}, "answers"),
        ({"answers": answers, "client_event_id": "not an id!"}, "client_event_id"),
        ({"answers": answers}, "client_event_id"),
    ]:
        answer = post(api, "questionnaire", body)
        assert answer.status_code == 400 and field in answer.json(), answer.content
    assert not Event.objects.filter(type="questionnaire").exists()
    once(api, "questionnaire", {"answers": answers, "client_event_id": cid()})
    once(api, "checks", {"check": "understood", "answer": "Documents", "client_event_id": cid()})
    pre = post(api, "pre-task", {"assignment": 1, "answers": {"familiarity": 9}, "client_event_id": cid()})
    assert pre.status_code == 400 and list(pre.json()["answers"]) == ["familiarity"]
    nowhere = post(
        api, "pre-task", {"assignment": 99, "answers": {"familiarity": 1}, "client_event_id": cid()}
    )
    assert nowhere.status_code == 400 and "assignment" in nowhere.json()


def test_steps_out_of_order_are_a_409_with_the_reason(study, participant):
    api = api_for(participant)
    for what, body in [
        ("questionnaire", {"answers": {}}),
        ("checks", {"check": "understood", "answer": "People"}),
        ("pre-task", {"assignment": 1, "answers": {}}),
    ]:
        answer = post(api, what, {**body, "client_event_id": cid()})
        assert answer.status_code == 409 and "consent" in answer.json()["detail"]
    ready_by_api(api, study)
    # The check first, then the task's questions, in the order given.
    assert (
        post(
            api, "pre-task", {"assignment": 1, "answers": {"familiarity": 1}, "client_event_id": cid()}
        ).status_code
        == 409
    )
    once(api, "checks", {"check": "understood", "answer": "Documents", "client_event_id": cid()})
    again = post(api, "checks", {"check": "understood", "answer": "Documents", "client_event_id": cid()})
    assert again.status_code == 409 and "already answered" in again.json()["detail"]
    second = post(api, "pre-task", {"assignment": 2, "answers": {"familiarity": 1}, "client_event_id": cid()})
    assert second.status_code == 409 and "order" in second.json()["detail"]
    once(api, "pre-task", {"assignment": 1, "answers": {"familiarity": 1}, "client_event_id": cid()})
    session = post(api, "sessions", {"assignment": 1, "client_event_id": cid()}).json()["id"]
    for what, body in [("gold", {"grades": {"3": 3, "9": 0}}), ("post-task", {"answers": {}})]:
        answer = post(api, what, {**body, "session": session, "client_event_id": cid()})
        assert answer.status_code == 409 and "finish the search" in answer.json()["detail"]
    api.post(
        "/api/participant/events/",
        {"events": [{"id": cid(), "type": "session_end", "session": session, "data": {"reason": "gave_up"}}]},
        format="json",
    )
    early = post(api, "post-task", {"session": session, "answers": {}, "client_event_id": cid()})
    assert early.status_code == 409 and "two documents" in early.json()["detail"]
    # A grade left out is a 400 naming the document; a document not of the pair, a 409.
    left_out = post(api, "gold", {"session": session, "grades": {"3": 3}, "client_event_id": cid()})
    assert left_out.status_code == 400 and list(left_out.json()["grades"]) == ["9"]
    stranger = post(
        api, "gold", {"session": session, "grades": {"3": 3, "9": 0, "2": 1}, "client_event_id": cid()}
    )
    assert stranger.status_code == 409
    assert not Event.objects.filter(type="gold").exists()


def test_a_gold_grade_off_the_scale_is_a_400_naming_the_document(study, participant):
    api = api_for(participant)
    ready_by_api(api, study)
    once(api, "checks", {"check": "understood", "answer": "Documents", "client_event_id": cid()})
    once(api, "pre-task", {"assignment": 1, "answers": {"familiarity": 1}, "client_event_id": cid()})
    session = post(api, "sessions", {"assignment": 1, "client_event_id": cid()}).json()["id"]
    api.post(
        "/api/participant/events/",
        {"events": [{"id": cid(), "type": "session_end", "session": session, "data": {"reason": "gave_up"}}]},
        format="json",
    )
    off = post(api, "gold", {"session": session, "grades": {"3": 7, "9": -5}, "client_event_id": cid()})
    assert off.status_code == 400, off.content
    errors = off.json()["grades"]
    assert sorted(errors) == ["3", "9"]
    assert "grade '7' for document 3 is not on this study's scale (0, 1, 2, 3)" in errors["3"][0]
    assert "'-5'" in errors["9"][0]
    one = post(api, "gold", {"session": session, "grades": {"3": 3, "9": 4}, "client_event_id": cid()})
    assert one.status_code == 400 and list(one.json()["grades"]) == ["9"]
    assert not Event.objects.filter(type="gold").exists()
    assert step(api)["kind"] == "gold"
    once(api, "gold", {"session": session, "grades": {"3": 3, "9": 0}, "client_event_id": cid()})


def test_another_participants_session_is_refused(study, participant, other_participant):
    api = api_for(participant)
    ready_by_api(api, study)
    once(api, "checks", {"check": "understood", "answer": "Documents", "client_event_id": cid()})
    once(api, "pre-task", {"assignment": 1, "answers": {"familiarity": 1}, "client_event_id": cid()})
    session = post(api, "sessions", {"assignment": 1, "client_event_id": cid()}).json()["id"]
    api.post(
        "/api/participant/events/",
        {"events": [{"id": cid(), "type": "session_end", "session": session, "data": {"reason": "gave_up"}}]},
        format="json",
    )
    other = api_for(other_participant)
    ready_by_api(other, study)
    for what, body in [
        ("gold", {"grades": {"3": 3, "9": 0}}),
        ("post-task", {"answers": {"search_went_well": 3}}),
    ]:
        for session_id in (session, 10**15):  # someone else's and one that does not exist: the same answer
            answer = post(other, what, {**body, "session": session_id, "client_event_id": cid()})
            assert answer.status_code == 400 and answer.json() == {
                "session": ["not one of your search sessions"]
            }
    assert not Event.objects.filter(participant=other_participant, type__in=["gold", "post_task"]).exists()
    assert step(api)["kind"] == "gold"


def test_a_wrong_comprehension_answer_is_asked_again_and_the_answer_never_shown(study, participant):
    api = api_for(participant)
    ready_by_api(api, study)
    now = once(api, "checks", {"check": "understood", "answer": "People", "client_event_id": "wrong-1"})
    assert now["kind"] == "checks" and now["retry"] is True and now["check"]["name"] == "understood"
    no_secret(now)
    now = once(api, "checks", {"check": "understood", "answer": "Documents", "client_event_id": "right-1"})
    assert now["kind"] == "pre_task" and now["retry"] is False


def test_a_decline_and_a_withdrawal_end_the_way_and_replay_the_same(study, participant, other_participant):
    api = api_for(participant)
    now = once(api, "consent", {"decision": "decline", "client_event_id": "no-thanks"})
    assert now["kind"] == "declined"
    refused = post(api, "questionnaire", {"answers": {}, "client_event_id": cid()})
    assert refused.status_code == 409 and "declined" in refused.json()["detail"]

    other = api_for(other_participant)
    ready_by_api(other, study)
    assert Event.objects.filter(participant=other_participant).exists()
    first = post(other, "withdraw", {"client_event_id": "bye"})
    assert first.status_code == 200 and first.json()["step"]["kind"] == "withdrawn"
    again = post(other, "withdraw", {"client_event_id": "bye"})
    assert again.json() == first.json()
    assert not Event.objects.filter(participant=other_participant).exists()
    assert Participant.objects.get(pk=other_participant.pk).withdrawn_at is not None
    assert (
        post(
            other, "checks", {"check": "understood", "answer": "Documents", "client_event_id": cid()}
        ).status_code
        == 409
    )
    assert Assignment.objects.filter(participant=other_participant).exclude(pre_task_answers={}).count() == 0


def test_the_step_needs_the_participants_token(study):
    assert APIClient().get("/api/participant/step/").status_code == 401
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Participant not-a-token")
    assert (
        bad.post(
            "/api/participant/consent/", {"decision": "decline", "client_event_id": cid()}, format="json"
        ).status_code
        == 401
    )


def test_a_paused_study_says_so_and_takes_no_new_step(study, participant, alice):
    lifecycle.study_status_change(study=study, status=lifecycle.PAUSED, by=alice)
    api = api_for(participant)
    now = step(api)
    assert now["kind"] == "paused" and now["message"]
    refused = post(
        api,
        "consent",
        {"decision": "agree", "consent_version": study.consent_version, "client_event_id": cid()},
    )
    assert refused.status_code == 409 and refused.json()["detail"] == now["message"]
    assert Participant.objects.get(pk=participant.pk).consented_at is None


def test_gold_documents_judged_wrongly_screen_out_without_saying_which_was_which(study, participant):
    recruitment_update(study=study, checks={"preset": "strict", "gold": True})
    api = api_for(participant)
    ready_by_api(api, study)
    once(api, "pre-task", {"assignment": 1, "answers": {"familiarity": 1}, "client_event_id": cid()})
    session = post(api, "sessions", {"assignment": 1, "client_event_id": cid()}).json()["id"]
    api.post(
        "/api/participant/events/",
        {"events": [{"id": cid(), "type": "session_end", "session": session, "data": {"reason": "gave_up"}}]},
        format="json",
    )
    now = once(api, "gold", {"session": session, "grades": {"3": 0, "9": 3}, "client_event_id": "g-wrong"})
    no_secret(now)
    assert now["kind"] == "ended" and now["message"]
    assert now["completion"] == {
        "kind": "failed_checks",
        "redirect_url": "",
        "code": Recruitment.objects.get(study=study).code_failed_checks,
        "message": "",
    }
    assert (
        post(
            api,
            "post-task",
            {"session": session, "answers": {"search_went_well": 3}, "client_event_id": cid()},
        ).status_code
        == 409
    )
