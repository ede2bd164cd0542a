"""Built-in RAG against a local chat-completions server, and the lab's RAG service (issue 40): the passages
with their ids in the prompt, the answer's citations read back, the key sent and bound to its endpoint; a slow
or failed or hostile answer is a failed turn and a "try again" within the deadline, never a 5xx."""

import json
import time

import pytest
from django.test import Client

from studies.models import AnswerTurn, GenerationPrompt, System
from studies.search.engines.answers import ANSWER_MAX_CHARS
from studies.search.generative_keys import key_for, system_key_update

from .fake_answer_server import FakeAnswerServer

pytestmark = pytest.mark.django_db


@pytest.fixture
def server(settings):
    settings.OUTBOUND_ALLOW = ["127.0.0.1"]
    settings.OUTBOUND_BREAKER_FAILURES = 1000  # these tests fail on purpose
    with FakeAnswerServer() as fake:
        yield fake


def make_generative(session, config):
    system = System.objects.get(pk=session.assignment.system_id)
    system.backend, system.config = System.Backend.GENERATIVE, config
    system.save()
    return system


@pytest.fixture
def rag(running_study, session, server):
    config = {
        "answerer": "rag",
        "retrieval": "B",
        "k": 3,
        "passage_chars": 120,
        "endpoint_url": f"{server.base}/v1",
        "model": "tiny-llm",
        "temperature": 0.2,
        "timeout": 1,
    }
    system = make_generative(session, config)
    system_key_update(system=system, api_key="sk-secret-1")
    return session


def ask(participant, session, turn, question="wing boundary layer"):
    return Client().post(
        f"/p/{participant.access_token}/answer/",
        json.dumps({"session": session.pk, "turn": turn, "question": question}),
        content_type="application/json",
    )


def test_the_model_is_given_the_passages_with_their_ids_and_its_citations_are_read(participant, rag, server):
    response = ask(participant, rag, "t1")
    assert response.status_code == 200, response.content
    turn = AnswerTurn.objects.get(session=rag)
    [request] = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-secret-1"
    body = request["body"]
    assert (body["model"], body["temperature"], body["stream"]) == ("tiny-llm", 0.2, False)
    prompt = body["messages"][0]["content"]
    for n, passage in enumerate(turn.passages, 1):
        assert f"[{n}] (document {passage['doc']})" in prompt
        assert len(passage["text"]) <= 120
    assert [c["doc"] for c in turn.citations] == [turn.passages[0]["doc"], turn.passages[1]["doc"]]
    assert (turn.model_name, turn.tokens_in, turn.tokens_out) == ("tiny-llm", 321, 12)
    assert turn.prompt.text == prompt and GenerationPrompt.objects.count() == 1
    assert response.json()["text"] == "Wings lift [1]. Drag rises with speed [2]."


def test_the_same_prompt_is_kept_once(participant, rag, server):
    server.script = [
        ("status", 500)
    ]  # a failed turn is no history: the question asked again, the same prompt
    ask(participant, rag, "t1")
    ask(participant, rag, "t2")
    assert AnswerTurn.objects.filter(session=rag).count() == 2
    assert GenerationPrompt.objects.count() == 1


def test_a_slow_model_is_a_try_again_within_its_deadline(participant, rag, server):
    server.script = [("slow", 3)]
    started = time.monotonic()
    response = ask(participant, rag, "t1")
    assert time.monotonic() - started < 2.5  # the 1 s deadline, not the model's 3 s
    assert response.status_code == 503 and "try again" in response.json()["try_again"]
    turn = AnswerTurn.objects.get(session=rag)
    assert (turn.status, turn.error) == ("failed", "timed out")


@pytest.mark.parametrize(
    "behaviour, error",
    [
        (("status", 500), "HTTP 500"),
        (("raw", b"<html>upstream</html>"), "not JSON"),
        (("raw", b'{"choices": [{"message": {"content": 7}}]}'), "not a chat completion"),
        (("content", "x" * (ANSWER_MAX_CHARS + 1)), "answer too long"),
    ],
)
def test_a_failed_or_hostile_answer_is_a_try_again_kept_as_a_failed_turn(
    participant, rag, server, behaviour, error
):
    server.script = [behaviour]
    response = ask(participant, rag, "t1")
    assert response.status_code == 503
    assert AnswerTurn.objects.get(session=rag).error == error
    again = ask(participant, rag, "t2")  # the participant's "try again": a new turn, answered
    assert again.status_code == 200 and again.json()["ok"]


def test_citations_to_passages_not_given_are_refused_each_and_the_answer_shown(participant, rag, server):
    server.script = [("content", "One [1]. Two [7]. Three [made-up-doc].")]
    answer = ask(participant, rag, "t1").json()
    assert [c["rank"] for c in answer["citations"]] == [1]
    turn = AnswerTurn.objects.get(session=rag)
    assert turn.refused == [
        "citation [7]: no passage 7 (3 given)",
        "citation [made-up-doc]: not a passage given",
    ]


def test_a_key_is_never_sent_to_an_endpoint_it_was_not_given_for(participant, rag, server):
    system = System.objects.get(pk=rag.assignment.system_id)
    assert "sk-secret-1" not in json.dumps(system.config) and "sk-secret-1" not in system.api_key_encrypted
    system.config = {**system.config, "endpoint_url": f"{server.base}/v1/"}  # the same endpoint, written so
    system.save()
    assert key_for(system.api_key_encrypted, system.config["endpoint_url"]) == "sk-secret-1"
    system.config = {**system.config, "endpoint_url": f"http://localhost:{server.httpd.server_address[1]}/v1"}
    system.save()  # moved by the admin, say, with no key given: the stored key stays unsent
    ask(participant, rag, "t1")
    assert "Authorization" not in server.requests[-1]["headers"]
    system_key_update(system=system)  # the page's and the API's save: a key for another endpoint goes
    assert System.objects.get(pk=system.pk).api_key_encrypted == ""


def test_the_lab_s_rag_service_answers_with_follow_ups_and_bad_items_refused(
    participant, running_study, session, server
):
    make_generative(session, {"answerer": "service", "url": f"{server.base}/rag", "timeout": 2})
    server.script = [
        (
            "service",
            {
                "answer": "Wings lift [1], drag [2], and [nowhere].",
                "retrieved": ["3", "999999"],
                "cited": ["5"],
                "follow_ups": ["What about heat?", {"no": 1}],
                "model": "lab-rag",
            },
        )
    ]
    answer = ask(participant, session, "t1").json()
    assert answer["ok"] and answer["follow_ups"] == ["What about heat?"]
    assert [c["doc"] for c in answer["cited"]] == ["3", "5"]  # 999999 is not in the collection
    [request] = server.requests
    assert request["body"] == {"query": "wing boundary layer", "history": [], "k": 5}
    turn = AnswerTurn.objects.get(session=session)
    assert "cited '999999': not in the study's collection" in turn.refused
    assert turn.model_name == "lab-rag" and turn.answerer == "service"
