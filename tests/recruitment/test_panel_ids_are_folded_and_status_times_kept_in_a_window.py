"""Panel ids are folded as each panel writes them (Prolific's hex in small letters, MTurk's worker ids in
capitals; a generic pool's as given), so one id in another letter case is the same participant with one row.
A status time outside the window around the server's clock (ahead by more than the setting, or before the
study was made) is refused per item with its reason and never stored as the newest."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from studies.errors import RecruitmentError
from studies.models import PanelNotification, Participant, Recruitment
from studies.participation.recruitment.panel_status import panel_export_import, status_time_error

from .conftest import join, prolific_pid

pytestmark = pytest.mark.django_db


def arrive(client, study, **query):
    token = Recruitment.objects.get(study=study).public_token
    response = client.get(f"/join/{token}/", query)
    assert response.status_code == 302
    return Participant.objects.get(access_token=response.url.split("/")[2])


def post(client, study, *items):
    found = Recruitment.objects.get(study=study)
    response = client.post(
        f"/join/{found.public_token}/status/",
        json.dumps({"notifications": list(items)}),
        content_type="application/json",
        HTTP_X_SESSIONLAB_SECRET=found.status_secret,
    )
    return response.json()["results"]


def test_a_prolific_id_in_capitals_is_the_same_participant(client, panel_study):
    pid = prolific_pid()
    first = arrive(client, panel_study, PROLIFIC_PID=pid.upper())
    again = arrive(client, panel_study, PROLIFIC_PID=pid)
    assert first.pk == again.pk and first.panel_id == pid  # stored in Prolific's own small letters
    assert panel_study.participants.filter(panel_id__iexact=pid).count() == 1


def test_a_participant_stored_before_folding_is_found_in_any_case(panel_study):
    pid = prolific_pid()
    old = join(panel_study, pid).participant
    Participant.objects.filter(pk=old.pk).update(panel_id=pid.upper())  # as an older version stored it
    assert join(panel_study, pid).participant.pk == old.pk


def test_an_mturk_worker_id_is_folded_to_capitals(client, panel_study):
    Recruitment.objects.filter(study=panel_study).update(panel="mturk")
    query = {"assignmentId": "3ASSIGN", "hitId": "3HIT"}
    first = arrive(client, panel_study, workerId="A1B2C3", **query)
    again = arrive(client, panel_study, workerId="a1b2c3", **query)
    assert first.pk == again.pk and again.panel_id == "A1B2C3"


def test_a_generic_pool_s_ids_keep_their_case(client, panel_study):
    Recruitment.objects.filter(study=panel_study).update(panel="generic")
    assert arrive(client, panel_study, pid="Ab1").pk != arrive(client, panel_study, pid="ab1").pk


def test_a_status_for_the_id_in_another_case_reaches_the_participant(client, panel_study):
    joined = join(panel_study).participant
    [result] = post(
        client, panel_study, {"id": "n1", "participant_id": joined.panel_id.upper(), "status": "returned"}
    )
    assert result["ok"] and result["participant"] == joined.code
    assert Participant.objects.get(pk=joined.pk).state == "returned"


def test_a_status_dated_9999_is_refused_and_a_later_real_one_applies(client, panel_study):
    joined = join(panel_study).participant
    far, real = (
        {"id": "n1", "participant_id": joined.panel_id, "status": "approved", "time": "9999-01-01T00:00:00Z"},
        {
            "id": "n2",
            "participant_id": joined.panel_id,
            "status": "returned",
            "time": timezone.now().isoformat(),
        },
    )
    first, second = post(client, panel_study, far, real)
    assert not first["ok"] and first["error"].startswith("time: 9999-01-01") and "ahead" in first["error"]
    assert second["ok"] and second["applied"]
    assert PanelNotification.objects.filter(key="endpoint:n1").count() == 0  # the refusal stored nothing
    joined.refresh_from_db()
    assert joined.panel_status == "returned" and joined.panel_status_at.year < 9999


def test_a_status_before_the_study_was_made_is_refused(client, panel_study):
    joined = join(panel_study).participant
    before = (panel_study.created_at - timedelta(days=1)).isoformat()
    [result] = post(
        client, panel_study, {"participant_id": joined.panel_id, "status": "returned", "time": before}
    )
    assert not result["ok"] and "before the study was created" in result["error"]
    assert Participant.objects.get(pk=joined.pk).panel_status is None


def test_the_window_ahead_follows_its_setting(panel_study, settings):
    settings.PANEL_STATUS_MAX_FUTURE_SECONDS = 600
    assert status_time_error(panel_study, timezone.now() + timedelta(minutes=9)) == ""
    assert "600 s ahead" in status_time_error(panel_study, timezone.now() + timedelta(minutes=11))


def test_a_9999_stored_before_the_window_no_longer_blocks(client, panel_study):
    joined = join(panel_study).participant
    far = timezone.now().replace(year=9999)
    Participant.objects.filter(pk=joined.pk).update(panel_status="approved", panel_status_at=far)
    [result] = post(
        client,
        panel_study,
        {
            "id": "n1",
            "participant_id": joined.panel_id,
            "status": "returned",
            "time": timezone.now().isoformat(),
        },
    )
    assert result["applied"] and Participant.objects.get(pk=joined.pk).panel_status == "returned"


def test_an_export_row_dated_9999_refuses_the_file_naming_its_line(panel_study):
    joined = join(panel_study).participant
    text = (
        "Submission id,Participant id,Status,Completed at\n"
        f"s1,{joined.panel_id},APPROVED,9999-01-01 00:00:00\n"
    )
    with pytest.raises(RecruitmentError) as refused:
        panel_export_import(study=panel_study, text=text)
    assert refused.value.errors[0].startswith("line 2, completed at: 9999-01-01")
    assert not PanelNotification.objects.exists()
