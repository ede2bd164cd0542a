"""A generative system (issue 40) is set up on the systems page without JSON and by the API; its key is
written, never read back, sealed to its endpoint and removed when a save moves the endpoint; the set-up
checklist names a retrieval system the study does not have."""

import json

import pytest

from studies.design.checklist import study_checklist
from studies.models import System
from studies.search.generative_keys import key_for

from ..interchange.api_helpers import client_for

pytestmark = pytest.mark.django_db

RAG = {
    "system-code": "G",
    "system-name": "Generated",
    "system-backend": "generative",
    "system-answerer": "rag",
    "system-retrieval": "A",
    "system-k": "4",
    "system-endpoint_url": "http://127.0.0.1:11434/v1",
    "system-model": "llama3.1:8b",
    "system-temperature": "0.3",
    "system-api_key": "sk-page-key",
}


def test_the_page_sets_up_built_in_rag_and_never_shows_the_key(alice_client, study):
    response = alice_client.post(f"/studies/{study.slug}/setup/systems/", RAG)
    assert response.status_code == 302, response.content.decode()[:3000]
    system = study.systems.get(code="G")
    assert (
        system.config["answerer"] == "rag"
        and system.config["k"] == 4
        and system.config["model"] == "llama3.1:8b"
    )
    assert "{passages}" in system.config["prompt_template"]  # the default prompt
    assert "sk-page-key" not in json.dumps(system.config)
    assert key_for(system.api_key_encrypted, system.config["endpoint_url"]) == "sk-page-key"
    page = alice_client.get(f"/studies/{study.slug}/setup/systems/{system.pk}/").content.decode()
    assert "sk-page-key" not in page and "key set" in page
    moved = {**RAG, "system-endpoint_url": "http://127.0.0.1:8000/v1", "system-api_key": ""}
    assert alice_client.post(f"/studies/{study.slug}/setup/systems/{system.pk}/", moved).status_code == 302
    assert System.objects.get(pk=system.pk).api_key_encrypted == ""


def test_the_page_refuses_a_bad_setting_at_its_field(alice_client, study):
    response = alice_client.post(
        f"/studies/{study.slug}/setup/systems/", {**RAG, "system-endpoint_url": "http://x/v1?y"}
    )
    assert response.status_code == 400
    assert "query (?)" in str(response.context["form"].errors["endpoint_url"])
    assert not study.systems.filter(code="G").exists()


def test_the_api_writes_the_key_and_says_only_whether_it_is_set(alice, study):
    api = client_for(alice)
    config = {"answerer": "rag", "retrieval": "A", "endpoint_url": "http://127.0.0.1:11434/v1", "model": "m"}
    response = api.post(
        f"/api/studies/{study.pk}/systems/",
        {"code": "G", "name": "G", "backend": "generative", "config": config, "api_key": "sk-api-key"},
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (
        body["api_key_set"] is True
        and "api_key" not in body
        and "sk-api-key" not in response.content.decode()
    )
    pk = body["id"]
    moved = {**config, "endpoint_url": "http://127.0.0.1:9999/v1"}
    response = api.patch(f"/api/studies/{study.pk}/systems/{pk}/", {"config": moved}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["api_key_set"] is False
    assert System.objects.get(pk=pk).api_key_encrypted == ""


def test_the_checklist_names_a_retrieval_system_the_study_lacks(study):
    System.objects.create(
        study=study,
        code="G",
        name="G",
        backend="generative",
        config={"answerer": "extractive", "retrieval": "Z"},
    )
    [systems] = [step for step in study_checklist(study=study) if step.key == "systems"]
    assert not systems.done
    assert any("no system 'Z'" in line for line in systems.missing)
