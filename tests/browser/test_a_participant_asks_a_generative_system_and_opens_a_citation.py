"""Issue 40: on a generative system's task the participant asks a question, reads the answer, opens a cited
document from its citation and judges it with the keys, then follows up; on each of the three kinds
(offline extractive; built-in RAG and the lab's RAG service against a local fake server). Every turn is stored
once with its query, the citation's opening and the judgment as a result's, the cited sources' exposure as
shown results'; a failed answer offers "Try again", which answers."""

import pytest

from studies.models import AnswerTurn, Event, Judgment, Participant, ResultExposure, System
from tests.participation.fake_answer_server import FakeAnswerServer

from .csp import csp_listen, csp_violations
from .test_the_search_page_mends import to_search, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def generative_first_task(token, config):
    participant = Participant.objects.get(access_token=token)
    first = participant.assignments.order_by("position").select_related("system").first()
    other = "B" if first.system.code == "A" else "A"
    if config.get("answerer") != "service":
        config = {**config, "retrieval": other}
    System.objects.filter(pk=first.system_id).update(backend=System.Backend.GENERATIVE, config=config)


def answered(page, turns: int) -> None:
    wait_until(page, f"document.querySelectorAll('#conversation .turn .answer-text').length === {turns}")


def ask(page, text: str, turns: int) -> None:
    page.fill("#query", text)
    page.press("#query", "Enter")
    answered(page, turns)


@pytest.fixture
def server(settings):
    settings.OUTBOUND_ALLOW = ["127.0.0.1"]
    settings.OUTBOUND_BREAKER_FAILURES = 1000
    with FakeAnswerServer() as fake:
        fake.service_default = {
            "answer": "Reports on wings [1] and on heat [2].",
            "retrieved": ["3", "7", "12"],
            "follow_ups": ["and heat transfer"],
            "model": "lab-rag",
        }
        yield fake


@pytest.mark.parametrize("kind", ["extractive", "rag", "service"])
def test_two_turns_a_citation_opened_and_judged(chromium, live_server, token, server, kind):
    config = {
        "extractive": {"answerer": "extractive", "k": 3},
        "rag": {"answerer": "rag", "k": 3, "endpoint_url": f"{server.base}/v1", "model": "m", "timeout": 2},
        "service": {"answerer": "service", "url": f"{server.base}/rag", "timeout": 2},
    }[kind]
    generative_first_task(token, config)
    if kind == "rag":
        server.script = [("status", 500)]  # the first answer fails: the page offers to try again
    page = chromium.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(15_000)
    reports = csp_listen(page)
    to_search(page, live_server, token)
    assert page.get_attribute("#query", "placeholder").startswith("Ask a question")
    page.fill("#query", "wing boundary layer")
    page.press("#query", "Enter")
    if kind == "rag":
        page.wait_for_selector(".try-again-button")
        assert "not available right now" in page.text_content(".try-again")
        page.click(".try-again-button")
    answered(page, 1)
    first = page.locator("#conversation .turn").nth(0)
    assert "[1]" in first.locator(".answer-text").text_content()
    cited = first.locator(".answer-text .citation").first
    doc = cited.get_attribute("data-doc")
    cited.click()
    page.wait_for_selector("#document-view:not([hidden])")
    assert page.get_attribute("#document-view", "data-doc") == doc
    page.keyboard.press("2")
    wait_until(page, "document.querySelector('.grade-button.chosen') !== null")
    page.keyboard.press("Escape")
    assert (
        first.locator(f".answer-source[data-doc='{doc}'] .judged").text_content().strip()
    )  # its grade shown
    if kind == "service":  # its suggestion is the follow-up
        page.click(".follow-up")
        answered(page, 2)
    else:
        ask(page, "and heat transfer", 2)
    page.evaluate("window.sessionlabReports.exposure()")  # what is on screen now (else every 15 s)
    wait_until(page, "window.sessionlabOutbox.pending() === 0")

    turns = list(AnswerTurn.objects.filter(status="ok").order_by("id"))
    assert [t.question for t in turns] == ["wing boundary layer", "and heat transfer"]
    assert [t.query.position for t in turns] == [1, 2] and {t.answerer for t in turns} == {kind}
    assert AnswerTurn.objects.filter(status="failed").count() == (1 if kind == "rag" else 0)
    opened = Event.objects.get(type="document_open")
    # The first citation of the first turn: its query's shown result at rank 1.
    assert (
        opened.payload["data"]["doc"],
        opened.payload["data"]["query"],
        opened.payload["data"]["rank"],
    ) == (
        doc,
        1,
        1,
    )
    assert opened.payload["ack"]["ok"]
    assert Judgment.objects.get(document__external_id=doc).grade == 2
    assert Event.objects.filter(type="query").count() == 2
    # The cited sources on screen are their queries' shown results' exposure: the first turn's reported when
    # the second was drawn, the second's on asking.
    for position in (1, 2):
        assert ResultExposure.objects.filter(shown_result__query__position=position).exists(), position
    assert csp_violations(page, reports) == []
    page.close()
