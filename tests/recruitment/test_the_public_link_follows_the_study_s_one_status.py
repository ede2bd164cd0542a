"""The public link takes arrivals exactly when the study is open: a draft's link says it is not open yet, a
paused one's that it is paused, a closed one's that it is closed, and nobody is made. The recruitment page
shows the study's status and the same buttons as the study page; it has no closing switch of its own."""

import pytest

from studies.design import lifecycle, services
from studies.models import Participant, Recruitment

from .conftest import prolific_pid

pytestmark = pytest.mark.django_db


def arrive(client, study):
    token = Recruitment.objects.get(study=study).public_token
    return client.get(f"/join/{token}/", {"PROLIFIC_PID": prolific_pid(), "STUDY_ID": "S", "SESSION_ID": "X"})


def test_an_open_study_s_link_makes_a_participant(client, panel_study):
    before = Participant.objects.filter(study=panel_study).count()
    response = arrive(client, panel_study)
    assert response.status_code == 302 and response.url.startswith("/p/")
    assert Participant.objects.filter(study=panel_study).count() == before + 1


@pytest.mark.parametrize(
    "status, answer",
    [
        ("paused", "This study is paused for a while"),
        ("closed", "This study is closed and takes no new answers"),
    ],
)
def test_a_paused_or_closed_study_s_link_makes_nobody(client, panel_study, alice, status, answer):
    lifecycle.study_status_change(study=panel_study, status=status, by=alice)
    before = Participant.objects.filter(study=panel_study).count()
    response = arrive(client, panel_study)
    assert response.status_code == 409 and answer in response.content.decode()
    assert "Nothing you have done is lost" not in response.content.decode()  # a new arrival has done nothing
    assert Participant.objects.filter(study=panel_study).count() == before


def test_a_draft_s_link_says_it_is_not_open_yet(client, alice):
    draft = services.study_create(owner=alice, name="Not yet", consent_text="Consent.")
    Recruitment.objects.create(study=draft, panel="prolific")
    response = arrive(client, draft)
    assert response.status_code == 409
    assert "This study is not open yet: its researchers are still setting it up" in response.content.decode()
    assert not Participant.objects.filter(study=draft).exists()


def test_reopening_a_paused_study_opens_its_link_again(client, panel_study, alice):
    lifecycle.study_status_change(study=panel_study, status="paused", by=alice)
    assert arrive(client, panel_study).status_code == 409
    lifecycle.study_status_change(study=panel_study, status="open", by=alice)
    assert arrive(client, panel_study).status_code == 302


def test_the_recruitment_page_shows_and_changes_the_study_s_status(client, panel_study, alice):
    client.force_login(alice)
    page = client.get(f"/studies/{panel_study.slug}/recruitment/").content.decode()
    assert '<span id="study-status">Open</span>' in page and "Open to new arrivals, as the study is" in page
    assert f'action="/studies/{panel_study.slug}/status/"' in page
    assert '<input type="hidden" name="back" value="recruitment">' in page
    assert 'name="closed"' not in page and 'name="public_link_open"' not in page  # one switch, not three
    response = client.post(
        f"/studies/{panel_study.slug}/status/", {"status": "paused", "back": "recruitment"}
    )
    assert response.url == f"/studies/{panel_study.slug}/recruitment/"
    page = client.get(response.url).content.decode()
    assert '<span id="study-status">Paused</span>' in page
    assert "Closed to new arrivals: the study is paused" in page
    study_page = client.get(f"/studies/{panel_study.slug}/").content.decode()
    assert '<span id="study-status">Paused</span>' in study_page


def test_an_unknown_back_page_returns_to_the_study_page(client, panel_study, alice):
    client.force_login(alice)
    response = client.post(f"/studies/{panel_study.slug}/status/", {"status": "paused", "back": "//evil"})
    assert response.url == f"/studies/{panel_study.slug}/"


def test_a_draft_s_recruitment_page_says_its_link_is_not_open_yet(client, alice):
    draft = services.study_create(owner=alice, name="Not yet", consent_text="Consent.")
    client.force_login(alice)
    page = client.get(f"/studies/{draft.slug}/recruitment/").content.decode()
    assert '<span id="study-status">Draft</span>' in page
    assert "Closed to new arrivals: the study is a draft (the link answers that it is not open yet)" in page
    assert 'id="missing-to-open"' in page  # what the checklist still needs, as on the study page
