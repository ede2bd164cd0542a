"""Issue 40: on a generative system's task the participant asks a question, reads the answer, opens a cited
document from its citation and judges it with the keys, then follows up; every turn is stored once with its
query, the citation's opening and the judgment as a result's."""

import pytest

from studies.models import AnswerTurn, Event, Judgment, Participant, System

from .csp import csp_listen, csp_violations
from .test_the_search_page_mends import to_search, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def generative_first_task(token):
    participant = Participant.objects.get(access_token=token)
    first = participant.assignments.order_by("position").select_related("system").first()
    other = "B" if first.system.code == "A" else "A"
    System.objects.filter(pk=first.system_id).update(
        backend=System.Backend.GENERATIVE, config={"answerer": "extractive", "retrieval": other, "k": 3}
    )


def ask(page, text: str, turns: int) -> None:
    page.fill("#query", text)
    page.press("#query", "Enter")
    wait_until(page, f"document.querySelectorAll('#conversation .turn .answer-text').length === {turns}")


def test_two_turns_a_citation_opened_and_judged(chromium, live_server, token):
    generative_first_task(token)
    page = chromium.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(15_000)
    reports = csp_listen(page)
    to_search(page, live_server, token)
    assert page.get_attribute("#query", "placeholder").startswith("Ask a question")
    ask(page, "wing boundary layer", 1)
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
    ask(page, "and heat transfer", 2)
    wait_until(page, "window.sessionlabOutbox.pending() === 0")

    turns = list(AnswerTurn.objects.order_by("id"))
    assert [t.question for t in turns] == ["wing boundary layer", "and heat transfer"]
    assert all(t.query is not None for t in turns) and [t.query.position for t in turns] == [1, 2]
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
    assert csp_violations(page, reports) == []
    page.close()
