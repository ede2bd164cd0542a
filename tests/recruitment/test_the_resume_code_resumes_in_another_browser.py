"""A participant who changes browser resumes by themselves with the resume code their pages show:
typed on the refusal page of the public link, the right code sends this browser on to their private link and
gives it the resume cookie; a wrong one, another participant's, or one past the tries gets no token."""

import pytest
from django.core.cache import cache
from django.test import Client

from studies.models import Participant, Recruitment
from studies.participation.recruitment.resume import RESUME_CODE_TRIES, resume_code_of

from .conftest import prolific_pid

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_tries_counted():
    cache.clear()


def arrive(study):
    """A first arrival in a browser of its own: (the public link's path, its query, the participant)."""
    token = Recruitment.objects.get(study=study).public_token
    path, query = f"/join/{token}/", {"PROLIFIC_PID": prolific_pid()}
    first = Client()
    first.get(path, query)
    return path, query, Participant.objects.get(study=study, panel_id=query["PROLIFIC_PID"])


def test_the_participant_s_pages_show_their_resume_code_and_the_refusal_asks_for_it(panel_study):
    path, query, participant = arrive(panel_study)
    page = Client().get(f"/p/{participant.access_token}/").content.decode()
    assert resume_code_of(participant) in page and 'id="resume-code"' in page
    refusal = Client().get(path, query)
    assert refusal.status_code == 409 and 'id="resume-form"' in refusal.content.decode()
    assert resume_code_of(participant) not in refusal.content.decode()


def test_the_right_code_resumes_another_browser_and_keeps_it(panel_study):
    path, query, participant = arrive(panel_study)
    other = Client()
    assert participant.access_token not in other.get(path, query).content.decode()
    code = resume_code_of(participant).lower().replace("-", " ").replace("0", "o")  # as typed by hand
    answer = other.post(f"{path}resume/", {"panel_id": participant.panel_id, "code": code})
    assert answer.status_code == 302 and answer.url.endswith(f"/p/{participant.access_token}/")
    assert other.get(path, query).url == answer.url  # this browser now holds the cookie


@pytest.mark.parametrize("wrong", ["another participant's", "made up", "too long"])
def test_a_wrong_code_gets_no_token(panel_study, wrong):
    path, query, participant = arrive(panel_study)
    someone = arrive(panel_study)[2]
    code = {
        "another participant's": resume_code_of(someone),
        "made up": "ABCDE-FGHJK",
        "too long": resume_code_of(participant) + " " * 50,
    }[wrong]
    answer = Client().post(f"{path}resume/", {"panel_id": participant.panel_id, "code": code})
    text = answer.content.decode()
    assert answer.status_code == 403 and participant.access_token not in text
    assert "code: this code does not match this id" in text


def test_past_the_tries_even_the_right_code_waits(panel_study):
    path, query, participant = arrive(panel_study)
    attacker = Client()
    for _ in range(RESUME_CODE_TRIES):
        attacker.post(f"{path}resume/", {"panel_id": participant.panel_id, "code": "00000-00000"})
    answer = attacker.post(
        f"{path}resume/", {"panel_id": participant.panel_id, "code": resume_code_of(participant)}
    )
    assert answer.status_code == 429 and participant.access_token not in answer.content.decode()
    assert "too many wrong codes" in answer.content.decode()


@pytest.mark.parametrize(("panel_id", "status"), [("nobody-has-this", 403), ("<script>", 400), ("", 400)])
def test_an_unknown_or_malformed_id_gets_a_reason_and_no_token(panel_study, panel_id, status):
    path = arrive(panel_study)[0]
    answer = Client().post(f"{path}resume/", {"panel_id": panel_id, "code": "ABCDE-FGHJK"})
    assert answer.status_code == status and "/p/" not in answer.content.decode()
