"""The panel ids come back only when asked for by name (`?include=panel_ids` on the downloads and the API,
`--include-panel-ids` on the commands), and only for the study's owner: Bob, who researches on the study, a
superuser who does not own it, an assessor and an anonymous caller are refused (a 403 with the reason for
anyone who sees the study), never handed the file without them as if that were what they asked for."""

import json

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token

from studies.models import StudyAssessor
from tests.interchange.panel_ids_helpers import (
    ARRIVAL_IDS,
    FIRST_IDS,
    PANEL_ID_COLUMNS,
    body_of,
    csv_rows,
    every_id,
    study_with_panel_arrivals,
    zip_texts,
)

pytestmark = pytest.mark.django_db

PAGE_TABLES = "/studies/{slug}/downloads/tables.zip?include=panel_ids"
PAGE_ARCHIVE = "/studies/{slug}/downloads/archive.json?include=panel_ids"
API_TABLES = "/api/studies/{pk}/tables/?include=panel_ids"
API_ARCHIVE = "/api/studies/{pk}/archive/?include=panel_ids"
ASKED = [PAGE_TABLES, PAGE_ARCHIVE, API_TABLES, API_ARCHIVE]


def _url(template, study):
    return template.format(slug=study.slug, pk=study.pk)


def _ids_in_tables(body):
    return {
        row["participant"]: tuple(row[c] for c in PANEL_ID_COLUMNS)
        for row in csv_rows(zip_texts(body)["participants.csv"])
    }


def _ids_in_archive(body):
    return {
        p["code"]: tuple(p[c] for c in PANEL_ID_COLUMNS) for p in json.loads(body.decode())["participants"]
    }


@pytest.mark.parametrize("template", [PAGE_TABLES, API_TABLES])
def test_the_owner_asking_by_name_gets_the_tables_with_the_ids(worked_study, alice, client, template):
    study_with_panel_arrivals(worked_study, alice)
    client.force_login(alice)
    response = client.get(_url(template, worked_study))
    assert response.status_code == 200
    ids = _ids_in_tables(body_of(response))
    assert (ids["P001"], ids["P004"], ids["P003"]) == (FIRST_IDS, ARRIVAL_IDS, ("", "", ""))


@pytest.mark.parametrize("template", [PAGE_ARCHIVE, API_ARCHIVE])
def test_the_owner_asking_by_name_gets_the_archive_with_the_ids(worked_study, alice, client, template):
    study_with_panel_arrivals(worked_study, alice)
    client.force_login(alice)
    response = client.get(_url(template, worked_study))
    assert response.status_code == 200
    ids = _ids_in_archive(body_of(response))
    assert (ids["P001"], ids["P004"], ids["P003"]) == (FIRST_IDS, ARRIVAL_IDS, (None, None, None))


def test_the_api_takes_the_owner_s_token_too(worked_study, alice, client):
    study_with_panel_arrivals(worked_study, alice)
    token = Token.objects.create(user=alice)
    response = client.get(_url(API_ARCHIVE, worked_study), HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200 and _ids_in_archive(body_of(response))["P004"] == ARRIVAL_IDS


@pytest.mark.parametrize("template", ASKED)
def test_a_co_researcher_asking_is_refused_with_the_reason(worked_study, alice, bob, client, template):
    study_with_panel_arrivals(worked_study, alice)
    client.force_login(bob)
    response = client.get(_url(template, worked_study))
    assert response.status_code == 403
    text = body_of(response).decode()
    assert "only the study's owner" in text and "include=panel_ids" in text
    assert [found for found in every_id() if found in text] == []
    # Without asking, Bob gets the shared file, as every researcher of the study does.
    plain = client.get(_url(template, worked_study).replace("?include=panel_ids", ""))
    assert plain.status_code == 200
    assert [found for found in every_id() if found in "\n".join(_texts(body_of(plain)))] == []


def _texts(body):
    return zip_texts(body).values() if body[:2] == b"PK" else [body.decode()]


@pytest.mark.parametrize("template", ASKED)
def test_a_superuser_who_does_not_own_the_study_is_refused(
    worked_study, alice, django_user_model, client, template
):
    study_with_panel_arrivals(worked_study, alice)
    root = django_user_model.objects.create_superuser("root", password="root-password")
    client.force_login(root)
    response = client.get(_url(template, worked_study))
    assert response.status_code == 403 and "only the study's owner" in body_of(response).decode()


@pytest.mark.parametrize("template", ASKED)
def test_an_assessor_and_an_anonymous_caller_get_nothing(
    worked_study, alice, django_user_model, client, template
):
    study_with_panel_arrivals(worked_study, alice)
    response = client.get(_url(template, worked_study))
    api = template.startswith("/api/")
    assert response.status_code == (401 if api else 302)
    if not api:
        assert response["Location"].startswith("/accounts/login/")
    ann = django_user_model.objects.create_user("ann", password="ann-password")
    StudyAssessor.objects.create(study=worked_study, user=ann, invited_by=alice)
    client.force_login(ann)
    response = client.get(_url(template, worked_study))
    assert response.status_code == 403
    assert [found for found in every_id() if found in body_of(response).decode()] == []


@pytest.mark.parametrize(
    "template", [t.replace("include=panel_ids", "include=emails") for t in ASKED], ids=lambda t: t[:30]
)
def test_an_unknown_include_is_refused_by_name(worked_study, alice, client, template):
    study_with_panel_arrivals(worked_study, alice)
    client.force_login(alice)
    response = client.get(_url(template, worked_study))
    assert response.status_code == 400
    text = body_of(response).decode()
    assert "include" in text and "'emails'" in text and "panel_ids" in text


def test_the_commands_write_them_only_with_the_flag(worked_study, alice, tmp_path, capsys):
    study_with_panel_arrivals(worked_study, alice)
    call_command("export_csv", worked_study.slug, "-o", str(tmp_path / "tables"), "--include-panel-ids")
    rows = {r["participant"]: r for r in csv_rows((tmp_path / "tables" / "participants.csv").read_text())}
    assert tuple(rows["P004"][c] for c in PANEL_ID_COLUMNS) == ARRIVAL_IDS
    call_command("export_study", worked_study.slug, "-o", str(tmp_path / "s.json"), "--include-panel-ids")
    assert _ids_in_archive((tmp_path / "s.json").read_bytes())["P001"] == FIRST_IDS
    assert capsys.readouterr().err.count("keep it in the lab") == 2
