"""The OpenAPI 3 schema generates without warnings and validates; Swagger UI and ReDoc pages are served."""

import pytest
import yaml
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_the_schema_validates_without_warnings(tmp_path):
    path = tmp_path / "schema.yml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    schema = yaml.safe_load(path.read_text())
    assert schema["openapi"].startswith("3.")
    paths = schema["paths"]
    for expected in [
        "/api/studies/",
        "/api/studies/{study_pk}/sessions/{id}/",
        "/api/participant/events/",
        "/api/studies/{study_pk}/reference-versions/import-qrels/",
        "/api/studies/{study_pk}/participants/enrol/",
    ]:
        assert expected in paths, expected
    names = [p["name"] for p in paths["/api/studies/{study_pk}/sessions/"]["get"]["parameters"]]
    assert {"participant", "scenario", "system", "page", "page_size"} <= set(names)
    assert "participantToken" in schema["components"]["securitySchemes"]


def test_the_schema_and_doc_pages_are_served(client, alice):
    client.force_login(alice)
    assert client.get("/api/schema/").status_code == 200
    assert b"swagger" in client.get("/api/docs/").content.lower()
    assert b"redoc" in client.get("/api/redoc/").content.lower()
