"""A participant's turn with a generative system (issue 40): asked at the answer endpoint, answered by the
offline extractive answerer, stored once under the page's turn id, then logged as a query event whose shown
results are the cited documents, so that a citation opens and is judged as a result is."""

import json

import pytest
from django.test import Client

from studies.interchange.tidy_csv import study_tables
from studies.models import AnswerTurn, Event, ShownResult, System

pytestmark = pytest.mark.django_db


@pytest.fixture
def generative(running_study, session):
    System.objects.filter(pk=session.assignment.system_id).update(
        backend=System.Backend.GENERATIVE, config={"answerer": "extractive", "retrieval": "B", "k": 3}
    )
    return session


def ask(participant, session, turn, question="wing boundary layer"):
    return Client().post(
        f"/p/{participant.access_token}/answer/",
        json.dumps({"session": session.pk, "turn": turn, "question": question}),
        content_type="application/json",
    )


def post(participant, events):
    response = Client().post(
        f"/p/{participant.access_token}/events/",
        json.dumps({"events": events}),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    return response.json()["acks"]


def event(session, cid, type, **data):
    return {"id": cid, "type": type, "session": session.pk, "data": data}


def test_a_question_is_answered_with_citations_and_stored_once(participant, generative):
    first = ask(participant, generative, "t1")
    assert first.status_code == 200, first.content
    answer = first.json()
    assert answer["ok"] and "[1]" in answer["text"]
    assert [c["rank"] for c in answer["cited"]] == list(range(1, len(answer["cited"]) + 1))
    assert ask(participant, generative, "t1").json() == answer  # asked again: the stored turn
    turn = AnswerTurn.objects.get(session=generative)
    assert turn.answerer == "extractive" and turn.status == "ok"
    assert len(turn.passages) == 3 and turn.retrieved == [p["doc"] for p in turn.passages]
    assert [c["doc"] for c in turn.citations] == [c["doc"] for c in answer["citations"]]


def test_the_turn_s_query_event_shows_the_cited_documents_which_open_and_are_judged(participant, generative):
    answer = ask(participant, generative, "t1").json()
    cited = [c["doc"] for c in answer["cited"]]
    acks = post(
        participant,
        [
            event(generative, "q1", "query", text="wing boundary layer", turn="t1"),
            event(generative, "o1", "document_open", doc=cited[0], rank=1, query_event="q1"),
            event(generative, "j1", "judgment", doc=cited[0], grade=2, query_event="q1"),
        ],
    )
    assert [a["ok"] for a in acks] == [True, True, True], acks
    turn = AnswerTurn.objects.get(session=generative)
    assert turn.query is not None and turn.query.position == 1
    shown = list(
        ShownResult.objects.filter(query=turn.query)
        .order_by("rank")
        .values_list("rank", "document__external_id")
    )
    assert shown == list(enumerate(cited, 1))
    assert Event.objects.get(client_event_id="q1").payload["data"]["turn"] == "t1"


def test_a_follow_up_is_a_second_turn_given_the_first(participant, generative):
    ask(participant, generative, "t1")
    post(participant, [event(generative, "q1", "query", text="wing boundary layer", turn="t1")])
    second = ask(participant, generative, "t2", "and heat transfer?").json()
    assert second["ok"]
    acks = post(participant, [event(generative, "q2", "query", text="and heat transfer?", turn="t2")])
    assert acks[0]["ok"] and acks[0]["query"] == 2
    assert AnswerTurn.objects.filter(session=generative, query__isnull=False).count() == 2


def test_a_query_without_its_turn_or_with_one_logged_already_is_refused(participant, generative):
    ask(participant, generative, "t1")
    acks = post(
        participant,
        [
            event(generative, "q0", "query", text="no turn"),
            event(generative, "q1", "query", text="wing", turn="t1"),
            event(generative, "q2", "query", text="wing", turn="t1"),
            event(generative, "q3", "query", text="wing", turn="nope"),
        ],
    )
    assert [a["ok"] for a in acks] == [False, True, False, False]
    assert "data.turn" in acks[0]["refused"] and "logged already" in acks[2]["refused"]
    assert "no answer" in acks[3]["refused"]


def test_a_results_page_system_has_no_answers(participant, running_study, session):
    response = ask(participant, session, "t1")
    assert response.status_code == 409 and "list of results" in response.json()["refused"]
    assert not AnswerTurn.objects.exists()


@pytest.mark.parametrize(
    "body, status",
    [(b"not json", 400), (b"[1]", 400), (json.dumps({"turn": "t1", "question": "x"}).encode(), 409)],
)
def test_a_hostile_body_is_refused_plainly(participant, generative, body, status):
    response = Client().post(f"/p/{participant.access_token}/answer/", body, content_type="application/json")
    assert response.status_code == status


def test_the_page_gets_the_conversation_back_after_a_reload(participant, generative):
    ask(participant, generative, "t1")
    post(participant, [event(generative, "q1", "query", text="wing boundary layer", turn="t1")])
    page = Client().get(f"/p/{participant.access_token}/")
    assert page.status_code == 200
    client = json.loads(page.context["client"] and json.dumps(page.context["client"]))
    assert client["answerUrl"].endswith("/answer/")
    assert [t["query_event"] for t in client["turns"]] == ["q1"]
    assert b'id="conversation"' in page.content


def test_the_turns_and_their_citations_are_rows_of_turns_csv_and_citations_csv(participant, generative):
    answer = ask(participant, generative, "t1").json()
    post(participant, [event(generative, "q1", "query", text="wing boundary layer", turn="t1")])
    tables = study_tables(study=participant.study)
    header, *rows = tables["turns"]
    [turn] = [dict(zip(header, row, strict=True)) for row in rows]
    assert (turn["query"], turn["turn"], turn["status"], turn["answer"]) == (1, "t1", "ok", answer["text"])
    assert turn["cited"] == ";".join(c["doc"] for c in answer["cited"]) and turn["answerer"] == "extractive"
    header, *rows = tables["citations"]
    citations = [dict(zip(header, row, strict=True)) for row in rows]
    assert [(c["doc"], c["rank"], c["start"]) for c in citations] == [
        (c["doc"], c["rank"], c["start"]) for c in answer["citations"]
    ]


def test_the_replay_shows_the_answer_with_its_citations(participant, generative):
    from studies.replay.session_replay import session_replay

    answer = ask(participant, generative, "t1").json()
    post(participant, [event(generative, "q1", "query", text="wing boundary layer", turn="t1")])
    [query] = session_replay(session=generative)["queries"]
    assert query["answer"]["text"] == answer["text"] and query["answer"]["model"] == "extractive"
    assert [c["rank"] for c in query["answer"]["citations"]] == [c["rank"] for c in answer["citations"]]
    assert [r["doc"] for r in query["pages"][1]["results"]] == [c["doc"] for c in answer["cited"]]


def test_another_participant_s_session_and_bad_questions_are_refused(
    participant, other_participant, other_session, generative
):
    theirs = ask(other_participant, generative, "t1")  # consented and started, but not their task
    assert theirs.status_code == 409 and "not one of your tasks" in theirs.json()["refused"]
    for question in ("   ", 7, None):
        response = ask(participant, generative, "t1", question)
        assert response.status_code == 409 and "type a question" in response.json()["refused"]
    assert ask(participant, generative, "bad id!", "wing").status_code == 409
    long = ask(participant, generative, "t2", "wing " * 1000)
    assert long.status_code == 200
    assert len(AnswerTurn.objects.get(client_turn_id="t2").question) == 1000
