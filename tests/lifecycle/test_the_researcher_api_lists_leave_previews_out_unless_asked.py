"""A researcher's preview (try-out) participant is kept out of files and scores; the researcher API's lists of
sessions, queries, judgments and events listed its rows. Every list of a study's participant rows now leaves
them out unless asked (`previews=include`), says so in the OpenAPI schema, and refuses another value with the
parameter named."""

import pytest
import yaml
from django.core.management import call_command

from studies.models import Judgment
from tests.interchange.api_helpers import client_for

from .test_preview_data_is_never_counted import previewed  # noqa: F401 (the fixture)

pytestmark = pytest.mark.django_db

LISTS = {
    "participants": lambda row: row["code"],
    "sessions": lambda row: row["participant"],
    "queries": lambda row: row["text"],
    "judgments": lambda row: row["session"],
    "events": lambda row: row["participant"],
}


def _rows(client, study, name, query=""):
    response = client.get(f"/api/studies/{study.pk}/{name}/{query}")
    assert response.status_code == 200, response.content
    return response.json()["results"]


@pytest.fixture
def judged_preview(previewed):  # noqa: F811
    study, preview = previewed
    session = preview.assignments.get(position=1).session
    document = session.queries.get().shown_results.get().document
    Judgment.objects.create(
        session=session, document=document, grade=2, created_at=session.ended_at, updated_at=session.ended_at
    )
    return study, preview, session


@pytest.mark.parametrize("name", list(LISTS))
def test_each_list_leaves_the_preview_out_unless_asked(judged_preview, alice, name):
    study, preview, session = judged_preview
    client = client_for(alice)
    default = _rows(client, study, name)
    excluded = _rows(client, study, name, "?previews=exclude")
    included = _rows(client, study, name, "?previews=include")
    assert default == excluded
    assert len(included) > len(default) > 0
    shown = {str(v) for v in map(LISTS[name], default)}
    assert not shown & {preview.code, "preview query", str(session.pk)}


def test_another_value_is_refused_naming_the_parameter(judged_preview, alice):
    study, _preview, _session = judged_preview
    response = client_for(alice).get(f"/api/studies/{study.pk}/events/?previews=yes")
    assert response.status_code == 400
    assert "previews" in response.json()


def test_the_schema_documents_the_parameter(tmp_path):
    path = tmp_path / "schema.yml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    paths = yaml.safe_load(path.read_text())["paths"]
    for name in LISTS:
        [parameter] = [
            p
            for p in paths[f"/api/studies/{{study_pk}}/{name}/"]["get"]["parameters"]
            if p["name"] == "previews"
        ]
        assert parameter["schema"]["enum"] == ["exclude", "include"]
