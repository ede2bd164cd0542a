"""API conventions (docs/api.md, "Conventions"): JSON request bodies only (the one upload multipart only),
so the schema offers one content type per body; JSON 404 and 405 anywhere under /api/ (the HTML pages keep
their own); 401 with WWW-Authenticate without credentials, 403 for a known account not allowed."""

import pytest
import yaml
from django.core.management import call_command
from django.test import Client
from rest_framework.authtoken.models import Token

from studies.models import Study

pytestmark = pytest.mark.django_db


def test_every_request_body_in_the_schema_has_one_content_type(tmp_path):
    path = tmp_path / "schema.yml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    schema = yaml.safe_load(path.read_text())
    bodies = {}
    for route, operations in schema["paths"].items():
        for method, operation in operations.items():
            if isinstance(operation, dict) and "requestBody" in operation:
                bodies[f"{method.upper()} {route}"] = sorted(operation["requestBody"]["content"])
    upload = "POST /api/studies/{study_pk}/reference-versions/import-qrels/"
    assert bodies.pop(upload) == ["multipart/form-data"]
    assert len(bodies) > 10
    assert {key: types for key, types in bodies.items() if types != ["application/json"]} == {}


def test_a_form_body_is_refused_with_a_json_415_and_changes_nothing(alice):
    client = Client()
    client.force_login(alice)
    response = client.post("/api/studies/", {"name": "By form"})  # multipart, as a form would send it
    assert response.status_code == 415
    assert response["Content-Type"] == "application/json"
    assert "multipart/form-data" in response.json()["detail"]
    assert not Study.objects.filter(name="By form").exists()


def test_the_upload_takes_multipart_only(worked_study, alice):
    client = Client()
    client.force_login(alice)
    url = f"/api/studies/{worked_study.pk}/reference-versions/import-qrels/"
    as_json = client.post(url, {"text": "1 0 d1 1\n"}, content_type="application/json")
    assert as_json.status_code == 415 and "application/json" in as_json.json()["detail"]
    as_text_field = client.post(url, {"text": "1 0 d1 1\n", "note": "multipart text field"})
    assert as_text_field.status_code == 201, as_text_field.content
    assert as_text_field.json()["judgment_count"] == 1


@pytest.mark.parametrize(
    "path",
    [
        "/api/",
        "/api/no-such-thing/",
        "/api/studies/1/no-such-list/",
        "/api/studies/not-a-number/",
        "/api/studies/1/scoring-runs/x/",
    ],
)
def test_an_unknown_api_url_is_a_json_404(path, alice):
    for client in (Client(), _logged_in(alice)):
        for method in ("get", "post", "delete"):
            response = getattr(client, method)(path)
            assert response.status_code == 404, (method, path)
            assert response["Content-Type"] == "application/json", (method, path)
            assert path in response.json()["detail"]


def test_a_missing_trailing_slash_still_redirects_a_get(alice):
    client = _logged_in(alice)
    response = client.get("/api/studies?name=x")
    assert response.status_code == 301 and response["Location"] == "/api/studies/?name=x"
    post = client.post("/api/studies", {"name": "x"}, content_type="application/json")
    assert post.status_code == 404 and "/api/studies/ (with a trailing slash)" in post.json()["detail"]


def test_the_html_pages_keep_their_own_404(alice):
    response = _logged_in(alice).get("/studies/no-such-study/")
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")
    assert Client().get("/nowhere/")["Content-Type"].startswith("text/html")


def test_a_method_an_endpoint_does_not_take_is_a_json_405(worked_study, alice):
    client = _logged_in(alice)
    for method, path in (
        ("put", "/api/studies/"),
        ("delete", f"/api/studies/{worked_study.pk}/sessions/"),
        ("post", f"/api/studies/{worked_study.pk}/grade-levels/"),
        ("get", "/api/auth/token/"),
    ):
        response = getattr(client, method)(path, content_type="application/json")
        assert response.status_code == 405, (method, path)
        assert response["Content-Type"] == "application/json"
        assert "not allowed" in response.json()["detail"]


def test_no_credentials_is_a_401_naming_the_scheme(worked_study):
    for path in ("/api/studies/", f"/api/studies/{worked_study.pk}/sessions/", "/api/collections/"):
        response = Client().get(path)
        assert response.status_code == 401, path
        assert response["WWW-Authenticate"] == "Token"
    participant = Client().get("/api/participant/")
    assert participant.status_code == 401 and participant["WWW-Authenticate"] == "Participant"
    wrong = Client(HTTP_AUTHORIZATION="Token " + "0" * 40).get("/api/studies/")
    assert wrong.status_code == 401 and wrong["WWW-Authenticate"] == "Token"


def test_a_known_account_not_allowed_is_a_403(worked_study, django_user_model):
    assessor = django_user_model.objects.create_user("ann", password="ann-password")  # no is_staff
    token = Token.objects.create(user=assessor)
    by_token = Client(HTTP_AUTHORIZATION=f"Token {token.key}").get("/api/studies/")
    by_session = _logged_in(assessor).get("/api/studies/")
    assert by_token.status_code == by_session.status_code == 403
    assert "WWW-Authenticate" not in by_token


def test_a_token_works_and_the_session_still_needs_its_csrf_token(worked_study, alice):
    token = Token.objects.create(user=alice)
    by_token = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Token {token.key}")
    created = by_token.post("/api/studies/", {"name": "By token"}, content_type="application/json")
    assert created.status_code == 201
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    refused = browser.post("/api/studies/", {"name": "No CSRF"}, content_type="application/json")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    browser.get("/accounts/login/")  # a page with a form: it sets the CSRF cookie
    csrf = browser.cookies["csrftoken"].value
    allowed = browser.post(
        "/api/studies/", {"name": "With CSRF"}, content_type="application/json", HTTP_X_CSRFTOKEN=csrf
    )
    assert allowed.status_code == 201, allowed.content


def _logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client
