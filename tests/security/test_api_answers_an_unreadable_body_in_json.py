"""A body the API cannot read is a JSON 4xx that says why: JSON nested too deeply (a RecursionError: a 500,
and with DEBUG on the technical page) and a body over
DATA_UPLOAD_MAX_MEMORY_SIZE (Django's HTML 400, no reason)."""

import json

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from studies.models import Study

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture
def anonymous():
    return APIClient(raise_request_exception=False)


def test_deep_json_to_the_token_endpoint_is_a_json_400(anonymous):
    response = anonymous.post("/api/auth/token/", DEEP, content_type="application/json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert "nested too deeply" in response.json()["detail"]


def test_deep_json_inside_an_object_is_refused_the_same_way(anonymous):
    body = '{"username": ' + DEEP + ', "password": "x"}'
    response = anonymous.post("/api/auth/token/", body, content_type="application/json")
    assert response.status_code == 400 and "nested too deeply" in response.json()["detail"]


def test_deep_json_to_a_researcher_endpoint_changes_nothing(alice):
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(alice)
    response = client.post(
        "/api/studies/", '{"name": "S", "description": ' + DEEP + "}", content_type="application/json"
    )
    assert response.status_code == 400 and "nested too deeply" in response.json()["detail"]
    assert not Study.objects.exists()


def test_a_body_over_the_limit_is_a_json_413_naming_the_limit(settings, alice):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(alice)
    response = client.post(
        "/api/studies/",
        json.dumps({"name": "S", "description": "x" * 20_000}),
        content_type="application/json",
    )
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert response.json()["detail"] == "the request body is larger than the limit of 10000 bytes"
    assert not Study.objects.exists()


def test_the_token_endpoint_says_so_too(settings, anonymous):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1_000
    get_user_model().objects.create_user("dora", password="dora-password")
    response = anonymous.post(
        "/api/auth/token/", {"username": "dora", "password": "p" * 5_000}, format="json"
    )
    assert response.status_code == 413 and "larger than the limit" in response.json()["detail"]
