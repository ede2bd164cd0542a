"""Resuming through the public link needs proof that it is the same person: `/join/<token>/?pid=`
handed an existing participant's private link to any client that sent their id again (pool ids can be
sequential, MTurk worker ids are known to other requesters), and with it their step, their events and their
withdrawal. Now only the browser that arrived first, holding the signed cookie that arrival set, resumes;
any other client gets a clear page, a 409, and no token."""

import pytest
from django.core import signing
from django.test import Client

from studies.models import Participant, Recruitment
from studies.participation.recruitment.resume import RESUME_SALT

from .conftest import prolific_pid
from .conftest import public_link as link

pytestmark = pytest.mark.django_db


def test_a_known_panel_id_from_another_browser_gets_no_token(client, panel_study):
    pid = prolific_pid()
    path, query = link(panel_study, PROLIFIC_PID=pid)
    assert client.get(path, query).status_code == 302
    participant = Participant.objects.get(study=panel_study, panel_id=pid)

    stranger = Client().get(path, query)
    assert stranger.status_code == 409
    text = stranger.content.decode()
    assert participant.access_token not in text and "/p/" not in text
    assert "has already started this study" in text and "browser you started in" in text
    assert "Location" not in stranger.headers
    assert Participant.objects.filter(study=panel_study, panel_id=pid).count() == 1


def test_the_first_browser_resumes_with_its_cookie(client, panel_study):
    path, query = link(panel_study, PROLIFIC_PID=prolific_pid())
    first = client.get(path, query)
    cookie = client.cookies[f"sessionlab_join_{Recruitment.objects.get(study=panel_study).pk}"]
    assert cookie["httponly"] and cookie["samesite"] == "Lax" and cookie["path"] == path
    assert client.get(path, query).url == first.url


@pytest.mark.parametrize("forged", ["participant-of-another", "tampered", "other-study-salt"])
def test_a_forged_or_another_participant_s_cookie_proves_nothing(client, panel_study, forged):
    path, query = link(panel_study, PROLIFIC_PID=prolific_pid())
    client.get(path, query)
    victim = Participant.objects.get(study=panel_study, panel_id=query["PROLIFIC_PID"])
    other_path, other_query = link(panel_study, PROLIFIC_PID=prolific_pid())
    attacker = Client()
    attacker.get(other_path, other_query)  # a participant of their own, with a genuine cookie for it
    name = f"sessionlab_join_{Recruitment.objects.get(study=panel_study).pk}"
    if forged == "tampered":
        attacker.cookies[name] = signing.dumps(victim.pk, salt=RESUME_SALT)[:-3] + "abc"
    elif forged == "other-study-salt":
        attacker.cookies[name] = signing.dumps(victim.pk, salt="another.salt")
    answer = attacker.get(path, query)  # the victim's id, the attacker's (or a forged) cookie
    assert answer.status_code == 409 and victim.access_token not in answer.content.decode()
