"""MTurk's ExternalQuestion: the preview (ASSIGNMENT_ID_NOT_AVAILABLE) shows the study and creates nobody; the
arrival's turkSubmitTo is kept only when it is exactly MTurk's production or sandbox host (anything else is
refused: the completion page posts the worker's data there); and the completion page of an MTurk participant
posts assignmentId and the code to <turkSubmitTo>/mturk/externalSubmit, offered only once they completed, with
a Content-Security-Policy whose form-action names that host on that page alone."""

import pytest

from studies.models import AuditEntry, Participant, Recruitment

from .conftest import finish

pytestmark = pytest.mark.django_db

SANDBOX = "https://workersandbox.mturk.com"


@pytest.fixture
def mturk_study(panel_study):
    Recruitment.objects.filter(study=panel_study).update(panel="mturk")
    panel_study.description = "Search for documents about aircraft and judge them."
    panel_study.save(update_fields=["description"])
    return panel_study


def arrive(client, study, **query):
    token = Recruitment.objects.get(study=study).public_token
    return client.get(f"/join/{token}/", query)


def accepted(worker="A1B2C3", assignment="3ASSIGN", submit_to=SANDBOX):
    query = {"workerId": worker, "assignmentId": assignment, "hitId": "3HIT"}
    if submit_to is not None:
        query["turkSubmitTo"] = submit_to
    return query


def test_the_preview_shows_the_study_and_creates_nobody(client, mturk_study):
    # MTurk's preview carries no workerId: the page still answers, with the study's description.
    response = arrive(
        client, mturk_study, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE", hitId="3HIT", turkSubmitTo=SANDBOX
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "aircraft" in page and "Accept the HIT" in page
    assert mturk_study.participants.count() == 2
    assert not AuditEntry.objects.filter(study=mturk_study, action="participant_joined").exists()


def test_an_accepted_hit_keeps_its_allowed_turk_submit_to(client, mturk_study):
    response = arrive(client, mturk_study, **accepted(submit_to=SANDBOX + "/"))
    participant = Participant.objects.get(study=mturk_study, panel_id="A1B2C3")
    assert response.status_code == 302
    joined = AuditEntry.objects.get(study=mturk_study, action="participant_joined")
    assert joined.detail["turk_submit_to"] == SANDBOX
    assert participant.panel_session_id == "3ASSIGN"


@pytest.mark.parametrize(
    "hostile",
    [
        "https://evil.example",
        "https://www.mturk.com.evil.example",
        "https://www.mturk.com@evil.example",
        "http://www.mturk.com",
        "//www.mturk.com",
        "javascript:alert(1)",
        "https://WWW.MTURK.COM",
        "https://www.mturk.com/mturk/externalSubmit?x=",
        "https://workersandbox.mturk.com:8443",
    ],
)
def test_a_turk_submit_to_outside_the_allow_list_is_refused(client, mturk_study, hostile):
    response = arrive(client, mturk_study, **accepted(submit_to=hostile))
    assert response.status_code == 400 and "turkSubmitTo" in response.content.decode()
    assert not Participant.objects.filter(study=mturk_study, panel_id="A1B2C3").exists()


def completion(client, participant):
    client.get(f"/p/{participant.access_token}/")  # the last page: their state follows their rows
    return client.get(f"/p/{participant.access_token}/completion/").json()["completion"]


def test_the_completion_posts_a_form_to_external_submit_once_completed(client, mturk_study):
    arrive(client, mturk_study, **accepted())
    participant = Participant.objects.get(study=mturk_study, panel_id="A1B2C3")
    home = f"/p/{participant.access_token}/"
    assert completion(client, participant) is None  # not completed: no code, no form
    assert SANDBOX not in client.get(home)["Content-Security-Policy"]

    finish(participant)
    done = completion(client, participant)
    code = Recruitment.objects.get(study=mturk_study).code_completed
    assert done["redirect_url"] == ""
    assert done["submit"] == {
        "action": f"{SANDBOX}/mturk/externalSubmit",
        "fields": {"assignmentId": "3ASSIGN", "completionCode": code},
    }
    page = client.get(home)
    # The page holds no form until completion.js has the server's confirmation; its policy allows that one.
    assert 'id="completion"' in page.content.decode() and "externalSubmit" not in page.content.decode()
    policy = page["Content-Security-Policy"]
    assert f"form-action 'self' {SANDBOX};" in policy and "www.mturk.com" not in policy
    # Only that page: the other pages keep form-action 'self'.
    assert (
        "form-action 'self';"
        in client.get(f"/join/{Recruitment.objects.get(study=mturk_study).public_token}/")[
            "Content-Security-Policy"
        ]
    )


def test_without_turk_submit_to_the_worker_pastes_the_code(client, mturk_study):
    arrive(client, mturk_study, **accepted(submit_to=None))
    participant = finish(Participant.objects.get(study=mturk_study, panel_id="A1B2C3"))
    done = completion(client, participant)
    assert done["submit"] is None and done["redirect_url"] == ""
    assert "mturk" not in client.get(f"/p/{participant.access_token}/")["Content-Security-Policy"]


def test_a_host_taken_off_the_allow_list_is_not_posted_to(client, mturk_study, settings):
    arrive(client, mturk_study, **accepted())
    participant = finish(Participant.objects.get(study=mturk_study, panel_id="A1B2C3"))
    settings.MTURK_SUBMIT_HOSTS = ("https://www.mturk.com",)
    assert completion(client, participant)["submit"] is None
