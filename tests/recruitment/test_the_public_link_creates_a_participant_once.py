"""The public link /join/<token>/ creates a participant on first visit from the panel's ids in the URL
(Prolific, MTurk, a generic ?pid=), gives the same panel id the same participant back in the browser that
arrived first (tests/recruitment/test_a_known_panel_id_alone_gets_no_private_link.py), and
shows MTurk's preview without a participant, refuses malformed
ids and a closed link with a reason, never a 500."""

import pytest

from studies.design import lifecycle
from studies.errors import Refused
from studies.models import Participant, Recruitment
from studies.participation.recruitment.panels import PanelIds, panel_ids_from_query

from .conftest import prolific_pid
from .conftest import public_link as link

pytestmark = pytest.mark.django_db


def test_a_prolific_link_creates_a_participant_and_sends_them_to_their_own_link(client, panel_study):
    pid = prolific_pid()
    path, query = link(panel_study, PROLIFIC_PID=pid, STUDY_ID="st1", SESSION_ID="se1")
    response = client.get(path, query)
    participant = Participant.objects.get(study=panel_study, panel_id=pid)
    assert response.status_code == 302 and response.url == f"/p/{participant.access_token}/"
    assert (participant.panel_study_id, participant.panel_session_id) == ("st1", "se1")
    assert participant.state == "started" and participant.started_at is not None
    assert participant.plan_row == 2  # rows 0 and 1 went to the two enrolled participants
    assert participant.assignments.count() == 4


def test_the_same_panel_id_in_the_same_browser_gets_the_same_participant_back(client, panel_study):
    path, query = link(panel_study, PROLIFIC_PID=prolific_pid())
    first = client.get(path, query)
    second = client.get(path, query)
    assert first.url == second.url
    assert panel_study.participants.count() == 3


@pytest.mark.parametrize(
    "pid",
    [
        "",
        "short",
        "x" * 24,
        "../../etc/passwd",
        "<script>alert(1)</script>",
        "a" * 1000,
        "5f\x00" + "0" * 21,
        "０" * 24,
    ],
)
def test_a_malformed_prolific_id_is_refused_with_its_name(client, panel_study, pid):
    path, query = link(panel_study, PROLIFIC_PID=pid)
    response = client.get(path, query)
    assert response.status_code == 400 and "PROLIFIC_PID" in response.content.decode()
    assert panel_study.participants.count() == 2


def test_an_mturk_preview_creates_nobody(client, panel_study):
    Recruitment.objects.filter(study=panel_study).update(panel="mturk")
    path, query = link(panel_study, workerId="A1B2C3", assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE", hitId="H1")
    response = client.get(path, query)
    # The preview shows the study (tests/recruitment/test_mturk_s_hit_is_submitted_by_a_form.py has more).
    assert response.status_code == 200 and "preview" in response.content.decode()
    assert panel_study.participants.count() == 2
    accepted = client.get(path, {**query, "assignmentId": "3ABC"})
    assert accepted.status_code == 302
    participant = Participant.objects.get(study=panel_study, panel_id="A1B2C3")
    assert (participant.panel_study_id, participant.panel_session_id) == ("H1", "3ABC")


def test_a_generic_pool_takes_pid(client, panel_study):
    Recruitment.objects.filter(study=panel_study).update(panel="generic")
    path, query = link(panel_study, pid="sona-1234")
    assert client.get(path, query).status_code == 302
    assert Participant.objects.filter(study=panel_study, panel_id="sona-1234").exists()


def test_a_paused_study_s_link_takes_nobody_new_but_keeps_those_who_came(client, panel_study, alice):
    path, query = link(panel_study, PROLIFIC_PID=prolific_pid())
    assert client.get(path, query).status_code == 302
    lifecycle.study_status_change(study=panel_study, status=lifecycle.PAUSED, by=alice)
    assert client.get(path, query).status_code == 302  # their own participant, still
    other = client.get(path, {"PROLIFIC_PID": prolific_pid()})
    assert other.status_code == 409 and "paused" in other.content.decode()


def test_an_unknown_or_malformed_link_token_is_a_404(client, panel_study):
    assert client.get("/join/" + "A" * 22 + "/", {"PROLIFIC_PID": prolific_pid()}).status_code == 404
    assert client.get("/join/%00%01/").status_code == 404


def test_a_head_request_creates_nobody(client, panel_study):
    path, query = link(panel_study, PROLIFIC_PID=prolific_pid())
    assert client.head(path, query).status_code == 405
    assert panel_study.participants.count() == 2


def test_a_study_without_systems_refuses_politely(client, study):
    Recruitment.objects.create(study=study)
    path, query = link(study, PROLIFIC_PID=prolific_pid())
    response = client.get(path, query)
    assert response.status_code == 409 and "not ready" in response.content.decode()


def test_the_panel_ids_are_read_by_one_rule():
    ids = panel_ids_from_query("prolific", {"PROLIFIC_PID": "a" * 24, "STUDY_ID": "s", "SESSION_ID": ""})
    assert ids == PanelIds("a" * 24, "s", None)
    with pytest.raises(Refused, match="STUDY_ID"):
        panel_ids_from_query("prolific", {"PROLIFIC_PID": "a" * 24, "STUDY_ID": "s p a c e"})
