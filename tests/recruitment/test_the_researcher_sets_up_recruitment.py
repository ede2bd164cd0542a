"""The researcher's recruitment page: the link templates for each panel, the codes with their panel actions,
the status endpoint and its secret; settings checked per field; the export import page lists each error by
line and field and imports nothing; the reconciliation page lists every disagreement."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from studies.models import Recruitment

from .conftest import join

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client, alice):
    client.force_login(alice)
    return client


def settings_of(**changes):
    return {
        "panel": "prolific",
        "code_completed": "DONE1",
        "code_screened_out": "SCR1",
        "code_failed_checks": "FAIL1",
        "time_limit_minutes": "90",
        **changes,
    }


def test_the_page_shows_each_panel_s_link_and_the_status_endpoint(signed_in, designed_study):
    html = signed_in.get(f"/studies/{designed_study.slug}/recruitment/").content.decode()
    found = Recruitment.objects.get(study=designed_study)
    assert f"/join/{found.public_token}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}" in html
    assert f"/join/{found.public_token}/?pid=" in html
    assert f"/join/{found.public_token}/status/" in html and found.status_secret in html
    assert found.code_completed in html and "Approve" in html


def test_the_settings_are_saved(signed_in, designed_study):
    response = signed_in.post(
        f"/studies/{designed_study.slug}/recruitment/", settings_of(closed_cells="S1:A, S2:B")
    )
    assert response.status_code == 302
    found = Recruitment.objects.get(study=designed_study)
    assert (found.code_completed, found.time_limit_minutes) == ("DONE1", 90)
    assert found.closed_cells == [["S1", "A"], ["S2", "B"]]


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"code_screened_out": "DONE1"}, "must differ"),
        ({"code_completed": "a b"}, "code completed"),
        ({"completion_url": "http://example.org/?cc="}, "completion URL"),
        ({"closed_cells": "S9:A"}, "not a scenario code"),
        ({"closed_cells": "S1"}, "scenario:system"),
        ({"time_limit_minutes": "99999999999"}, "time_limit_minutes"),
        ({"panel": "myspace"}, "panel"),
    ],
)
def test_a_bad_setting_is_refused_with_its_field(signed_in, designed_study, changes, message):
    response = signed_in.post(
        f"/studies/{designed_study.slug}/recruitment/", settings_of(**changes), follow=True
    )
    assert response.status_code == 200 and message in response.content.decode()
    assert (
        Recruitment.objects.get(study=designed_study).code_completed != "DONE1" or "code_completed" in changes
    )


def test_closing_the_study_from_the_recruitment_page_stops_the_public_link(signed_in, panel_study):
    response = signed_in.post(
        f"/studies/{panel_study.slug}/status/", {"status": "closed", "back": "recruitment"}
    )
    assert response.status_code == 302 and response.url == f"/studies/{panel_study.slug}/recruitment/"
    panel_study.refresh_from_db()
    assert panel_study.status == "closed"
    token = Recruitment.objects.get(study=panel_study).public_token
    assert signed_in.get(f"/join/{token}/", {"PROLIFIC_PID": "ab" * 12}).status_code == 409


def test_an_export_with_bad_rows_imports_nothing_and_lists_each_error(signed_in, panel_study):
    gone = join(panel_study).participant
    text = f"Participant id,Status\n{gone.panel_id},RETURNED\nx y,APPROVED\n{gone.panel_id},PAID\n"
    response = signed_in.post(
        f"/studies/{panel_study.slug}/recruitment/import/",
        {"export": SimpleUploadedFile("export.csv", text.encode())},
        follow=True,
    )
    html = response.content.decode()
    assert "Nothing imported" in html and "line 3, participant id" in html and "line 4, status" in html
    gone.refresh_from_db()
    assert gone.state == "started"


@pytest.mark.parametrize("raw", [b"\xff\xfe\x00garbage", b""])
def test_an_unreadable_upload_is_refused_plainly(signed_in, panel_study, raw):
    response = signed_in.post(
        f"/studies/{panel_study.slug}/recruitment/import/",
        {"export": SimpleUploadedFile("export.csv", raw)},
        follow=True,
    )
    assert response.status_code == 200 and "Nothing imported" in response.content.decode()


def test_the_reconciliation_page_lists_the_disagreements(signed_in, panel_study):
    gone = join(panel_study).participant
    text = f"Participant id,Status\n{gone.panel_id},APPROVED\n"
    signed_in.post(
        f"/studies/{panel_study.slug}/recruitment/import/",
        {"export": SimpleUploadedFile("export.csv", text.encode())},
    )
    html = signed_in.get(f"/studies/{panel_study.slug}/recruitment/reconciliation/").content.decode()
    assert gone.panel_id in html and "the panel has a submission, ours is started" in html
