"""The files meant to be shared carry no panel id (they identify people on Prolific or MTurk): the tables'
zip, the JSON archive, the TREC runs and the Session Track XML, from the study page, the API and the
commands, even for the study's owner, unless asked for by name (test_the_owner_alone_gets_the_panel_ids.py).
The panel's name and its status stay: they identify nobody."""

import json

import pytest
from django.core.management import call_command

from tests.interchange.panel_ids_helpers import (
    PANEL_ID_COLUMNS,
    body_of,
    csv_rows,
    every_id,
    study_with_panel_arrivals,
    zip_texts,
)

pytestmark = pytest.mark.django_db

SHARED_DOWNLOADS = [
    "/studies/{slug}/downloads/tables.zip",
    "/studies/{slug}/downloads/tables.zip?raw=1",
    "/studies/{slug}/downloads/archive.json",
    "/studies/{slug}/downloads/runs-query.zip",
    "/studies/{slug}/downloads/runs-session.zip",
    "/studies/{slug}/downloads/session-track.xml",
    "/api/studies/{pk}/archive/",
    "/api/studies/{pk}/tables/",
    "/api/studies/{pk}/runs/",
    "/api/studies/{pk}/session-track/",
]


def _texts(body: bytes) -> str:
    if body[:2] == b"PK":
        return "\n".join(zip_texts(body).values())
    return body.decode("utf-8")


def test_no_shared_download_holds_a_panel_id_even_for_the_owner(worked_study, alice, client):
    study_with_panel_arrivals(worked_study, alice)
    client.force_login(alice)
    for template in SHARED_DOWNLOADS:
        response = client.get(template.format(slug=worked_study.slug, pk=worked_study.pk))
        assert response.status_code == 200, (template, response.status_code)
        text = _texts(body_of(response))
        assert "P004" in text or "runs" in template or "session-track" in template, template
        assert [found for found in every_id() if found in text] == [], template


def test_participants_csv_keeps_the_panel_and_its_status_not_the_ids(worked_study, alice, client):
    study_with_panel_arrivals(worked_study, alice)
    client.force_login(alice)
    response = client.get(f"/studies/{worked_study.slug}/downloads/tables.zip")
    rows = {row["participant"]: row for row in csv_rows(zip_texts(body_of(response))["participants.csv"])}
    assert not set(PANEL_ID_COLUMNS) & set(rows["P001"])
    assert (rows["P001"]["panel"], rows["P001"]["panel_status"]) == ("prolific", "approved")
    assert (rows["P004"]["panel"], rows["P004"]["state"]) == ("prolific", "screened_out")
    assert rows["P003"]["panel"] == ""  # enrolled by the researcher


def test_the_archive_s_participants_have_no_panel_id_fields(worked_study, alice, client):
    study_with_panel_arrivals(worked_study, alice)
    client.force_login(alice)
    archive = json.loads(body_of(client.get(f"/studies/{worked_study.slug}/downloads/archive.json")))
    by_code = {p["code"]: p for p in archive["participants"]}
    for participant in by_code.values():
        assert not set(PANEL_ID_COLUMNS) & set(participant)
    assert by_code["P001"]["panel_status"] == "approved" and archive["recruitment"] == {"panel": "prolific"}


def test_the_commands_leave_them_out_without_the_flag(worked_study, alice, tmp_path):
    study_with_panel_arrivals(worked_study, alice)
    call_command("export_csv", worked_study.slug, "-o", str(tmp_path / "tables"))
    call_command("export_study", worked_study.slug, "-o", str(tmp_path / "study.json"))
    written = [*(tmp_path / "tables").iterdir(), tmp_path / "study.json"]
    assert len(written) == 11  # the nine tables (turns and citations too), population.txt and the archive
    for path in written:
        text = path.read_text(encoding="utf-8")
        assert [found for found in every_id() if found in text] == [], path.name
    header = (tmp_path / "tables" / "participants.csv").read_text().splitlines()[0].split(",")
    assert "panel" in header and not set(PANEL_ID_COLUMNS) & set(header)


def test_an_answer_named_like_a_panel_id_column_keeps_its_prefix(worked_study, alice):
    """An item named panel_id is an answer, never read as the panel's column, with or without the ids."""
    from studies.interchange.tidy_csv import study_tables

    study_with_panel_arrivals(worked_study, alice)
    worked_study.questionnaire = [{"name": "panel_id", "label": "Your id", "kind": "text"}]
    worked_study.save(update_fields=["questionnaire"])
    for panel_ids in (False, True):
        header = study_tables(study=worked_study, panel_ids=panel_ids)["participants"][0]
        assert "answer_panel_id" in header
        assert ("panel_id" in header) is panel_ids
