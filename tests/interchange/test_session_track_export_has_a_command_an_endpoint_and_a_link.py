"""The Session Track export is reachable as a management command, an API endpoint and a download on the study
page, each giving the file session_track_export writes; only the study's researchers get it."""

import xml.etree.ElementTree as ET

import pytest
from django.core.management import call_command
from django.urls import reverse

from studies.interchange.session_track import session_track_export

from .api_helpers import body, client_for

pytestmark = pytest.mark.django_db


def test_the_command_writes_the_log(worked_study, tmp_path):
    path = tmp_path / "study.xml"
    call_command("export_session_track", worked_study.slug, "-o", str(path))
    assert path.read_bytes() == session_track_export(study=worked_study)
    sessions = ET.parse(path).getroot().findall("session")
    assert len(sessions) == 2 and len(sessions[0].findall("interaction")) == 2
    assert len(sessions[0].findall("interaction/clicked/click")) == 2


def test_the_endpoint_answers_the_log_as_a_download(worked_study, alice):
    response = client_for(alice).get(f"/api/studies/{worked_study.pk}/session-track/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/xml")
    assert response["Content-Disposition"] == f'attachment; filename="{worked_study.slug}.sessiontrack.xml"'
    assert body(response) == session_track_export(study=worked_study)


def test_only_the_studys_researchers_get_it(worked_study, charlie):
    assert client_for(charlie).get(f"/api/studies/{worked_study.pk}/session-track/").status_code == 404
    assert client_for().get(f"/api/studies/{worked_study.pk}/session-track/").status_code in (401, 403)


def test_the_study_page_links_the_download(worked_study, alice, client):
    client.force_login(alice)
    url = reverse("api:study_session_track", args=[worked_study.pk])
    page = client.get(reverse("studies:study_detail", args=[worked_study.slug]))
    assert f'href="{url}" download' in page.content.decode()
    assert body(client.get(url)) == session_track_export(study=worked_study)
