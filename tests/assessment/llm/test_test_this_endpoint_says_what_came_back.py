"""'Test this endpoint' on the LLM assessor's page sends one tiny chat-completions request with the saved
settings through the outbound guard and says what came of it in plain words: OK with the model and the
latency, refused by the allow-list, timed out, or not a chat answer with a short excerpt; never the key."""

import json

import pytest
from django.urls import reverse

from studies.models import LLMRequest

from .conftest import API_KEY


@pytest.fixture
def test_endpoint(client, alice, pooled_study, llm_assessor):
    client.force_login(alice)
    url = reverse("assessment:llm_endpoint_test", args=[pooled_study.slug, llm_assessor.pk])

    def press():
        response = client.post(url)
        assert response.status_code == 200
        return response.content.decode()

    return press


def test_a_chat_server_is_ok_with_its_model_and_latency(test_endpoint, model_server):
    page = test_endpoint()
    assert "OK: model llama3.1:8b answered in " in page and " ms." in page
    [sent] = model_server.requests
    assert sent["path"] == "/v1/chat/completions" and sent["body"]["model"] == "llama3.1:8b"
    assert sent["body"]["max_tokens"] == 5 and sent["headers"]["Authorization"] == f"Bearer {API_KEY}"
    assert API_KEY not in page and not LLMRequest.objects.exists()  # nothing kept, nothing counted


def test_the_allow_list_refuses_before_sending(test_endpoint, model_server, settings):
    settings.OUTBOUND_ALLOW = []
    page = test_endpoint()
    assert "Refused before anything was sent: refused (address not allowed)" in page
    assert "OUTBOUND_ALLOW" in page and model_server.requests == []


def test_a_slow_server_times_out_in_plain_words(test_endpoint, model_server):
    model_server.script = [("slow", 3)]  # the assessor's timeout is 1 s
    assert "Timed out: no answer within 1 s." in test_endpoint()


def test_an_answer_that_is_no_chat_completion_shows_a_short_excerpt_without_the_key(
    test_endpoint, model_server
):
    echo = json.dumps({"echo": f"Bearer {API_KEY}", "filler": "x" * 5000}).encode()
    model_server.script = [("raw", echo)]
    page = test_endpoint()
    assert "Not a chat answer: HTTP 200" in page and "The answer began:" in page
    assert "[the API key]" in page and API_KEY not in page
    assert "x" * 300 not in page  # an excerpt, not the answer


def test_an_http_error_is_not_a_chat_answer(test_endpoint, model_server):
    model_server.script = [("status", 404)]
    page = test_endpoint()
    assert "Not a chat answer: HTTP 404" in page and "busy" in page


def test_the_page_offers_the_button_once_an_assessor_exists(client, alice, pooled_study, llm_assessor):
    client.force_login(alice)
    page = client.get(reverse("assessment:llm_assessor", args=[pooled_study.slug, llm_assessor.pk]))
    assert "Test this endpoint" in page.content.decode()
    add = client.get(reverse("assessment:llm_assessor_add", args=[pooled_study.slug]))
    assert "Test this endpoint" not in add.content.decode()


def test_someone_else_s_researcher_cannot_press_it(client, charlie, pooled_study, llm_assessor, model_server):
    client.force_login(charlie)
    url = reverse("assessment:llm_endpoint_test", args=[pooled_study.slug, llm_assessor.pk])
    assert client.post(url).status_code in (403, 404) and model_server.requests == []
