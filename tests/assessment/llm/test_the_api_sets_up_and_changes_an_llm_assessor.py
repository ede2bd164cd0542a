"""A researcher's script sets up an LLM assessor through the API and changes it: the page's defaults where a
setting is left out, the page's checks (a bad value is a 400 naming the field, and nothing is written), the
API key write-only (a key replaces, "" clears, null or absent keeps), only the study's researchers."""

from decimal import Decimal

import pytest

from studies.assessment.llm.keys import api_key_decrypt
from studies.assessment.llm.prompts import UMBRELA_PROMPT
from studies.models import LLMAssessor, StudyAssessor

from .conftest import API_KEY


def url(study, pk=None):
    base = f"/api/studies/{study.pk}/llm-assessors/"
    return base if pk is None else f"{base}{pk}/"


def post(api, study, body):
    return api.post(url(study), body, content_type="application/json")


def patch(api, study, pk, body):
    return api.patch(url(study, pk), body, content_type="application/json")


def test_a_create_takes_the_page_s_defaults_and_says_whether_a_key_is_set(api, pooled_study, model_server):
    answer = post(api, pooled_study, {"endpoint_url": model_server.endpoint, "model_name": "qwen2.5:7b"})
    assert answer.status_code == 201, answer.json()
    data = answer.json()
    assert data["username"] == f"llm-{pooled_study.pk}-qwen2.5-7b" and data["key_set"] is False
    assert data["prompt_template"] == UMBRELA_PROMPT
    assert (data["passage_max_chars"], data["requests_per_minute"], data["max_retries"]) == (4000, 60, 3)
    assert data["cost_cap"] is None and data["grade_map"] == {"0": 0, "1": 1, "2": 2, "3": 3}
    assessor = LLMAssessor.objects.get(pk=data["id"])
    assert assessor.membership_id == data["assessor_id"] and assessor.membership.is_machine
    assert "api_key" not in data and "api_key_encrypted" not in data

    listed = api.get(url(pooled_study)).json()
    assert [row["id"] for row in listed["results"]] == [data["id"]]
    assert api.get(url(pooled_study, data["id"])).json() == data


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"endpoint_url": "ftp://models.example/v1"}, "endpoint_url", "an http or https base URL"),
        ({"endpoint_url": "not a url"}, "endpoint_url", "valid URL"),
        ({"endpoint_url": "http://me:secret@models.example/v1"}, "endpoint_url", "own field"),
        ({"model_name": "  "}, "model_name", "may not be blank"),
        ({"prompt_template": "Judge {document}"}, "prompt_template", "unknown placeholder {document}"),
        ({"prompt_template": "No passage: {query}"}, "prompt_template", "must contain {passage}"),
        ({"passage_max_chars": 10}, "passage_max_chars", "greater than or equal to 100"),
        ({"max_retries": 11}, "max_retries", "less than or equal to 10"),
        ({"temperature": 3}, "temperature", "less than or equal to 2"),
        ({"token_cap": 2**64}, "token_cap", "less than or equal to"),
        ({"cost_cap": "5", "price_input_per_million": "0.5"}, "cost_cap", "give both prices"),
        ({"price_input_per_million": "-1"}, "price_input_per_million", "greater than or equal to 0"),
        ({"requests_per_minute": "many"}, "requests_per_minute", "valid integer"),
    ],
)
def test_a_bad_value_is_a_400_naming_the_field_and_nothing_is_written(api, pooled_study, body, field, words):
    accounts = StudyAssessor.objects.count()
    answer = post(api, pooled_study, {"endpoint_url": "http://127.0.0.1:9/v1", "model_name": "m", **body})
    assert answer.status_code == 400, answer.json()
    assert list(answer.json()) == [field] and words in " ".join(answer.json()[field])
    assert StudyAssessor.objects.count() == accounts and not LLMAssessor.objects.exists()


def test_a_scale_the_model_cannot_map_onto_is_a_409(api, pooled_study):
    pooled_study.grade_levels.exclude(value__in=[0, 1, 2]).delete()
    answer = post(api, pooled_study, {"endpoint_url": "http://127.0.0.1:9/v1", "model_name": "m"})
    assert answer.status_code == 409 and "grade scale" in answer.json()["detail"]
    assert not LLMAssessor.objects.exists()


def test_a_change_touches_only_what_is_sent(api, pooled_study, llm_assessor):
    answer = patch(
        api, pooled_study, llm_assessor.pk, {"max_retries": 5, "cost_cap": None, "token_cap": 9000}
    )
    assert answer.status_code == 200, answer.json()
    llm_assessor.refresh_from_db()
    assert (llm_assessor.max_retries, llm_assessor.token_cap, llm_assessor.model_name) == (
        5,
        9000,
        "llama3.1:8b",
    )
    assert llm_assessor.requests_per_minute == 100_000 and llm_assessor.timeout_seconds == 1
    assert api_key_decrypt(llm_assessor.api_key_encrypted) == API_KEY  # absent: kept

    refused = patch(api, pooled_study, llm_assessor.pk, {"price_input_per_million": "1", "cost_cap": "2"})
    assert refused.status_code == 400 and list(refused.json()) == ["cost_cap"]
    llm_assessor.refresh_from_db()
    assert llm_assessor.price_input_per_million is None and llm_assessor.cost_cap is None


def test_the_key_is_replaced_kept_or_cleared(api, pooled_study, llm_assessor):
    assert patch(api, pooled_study, llm_assessor.pk, {"api_key": "sk-new-one"}).json()["key_set"] is True
    llm_assessor.refresh_from_db()
    assert api_key_decrypt(llm_assessor.api_key_encrypted) == "sk-new-one"

    assert patch(api, pooled_study, llm_assessor.pk, {"api_key": None}).json()["key_set"] is True
    llm_assessor.refresh_from_db()
    assert api_key_decrypt(llm_assessor.api_key_encrypted) == "sk-new-one"

    assert patch(api, pooled_study, llm_assessor.pk, {"api_key": ""}).json()["key_set"] is False
    llm_assessor.refresh_from_db()
    assert llm_assessor.api_key_encrypted == ""


def test_the_prices_come_back_as_set(api, pooled_study, llm_assessor):
    body = {"price_input_per_million": "0.15", "price_output_per_million": "0.6", "cost_cap": "1.25"}
    data = patch(api, pooled_study, llm_assessor.pk, body).json()
    assert [Decimal(data[name]) for name in body] == [Decimal("0.15"), Decimal("0.6"), Decimal("1.25")]


def test_another_study_s_assessor_is_a_404(client, bob, charlie, pooled_study, llm_assessor):
    from studies.design import services

    other = services.study_create(owner=charlie, name="Charlie's", consent_text="Consent.")
    client.force_login(charlie)
    assert client.get(url(other, llm_assessor.pk)).status_code == 404
    assert client.get(url(pooled_study, llm_assessor.pk)).status_code == 404
    assert patch(client, pooled_study, llm_assessor.pk, {"model_name": "x"}).status_code == 404
    llm_assessor.refresh_from_db()
    assert llm_assessor.model_name == "llama3.1:8b"
