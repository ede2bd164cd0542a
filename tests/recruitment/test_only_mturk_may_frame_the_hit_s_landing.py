"""MTurk shows an ExternalQuestion HIT in a frame on its own site: the MTurk arrival landing (the preview, and
an accepted HIT opened inside a frame) may be framed by MTurk's three hosts and nobody else, and creates
nobody; its "Open the study in a new tab" link carries MTurk's parameters to the same join URL, where the
study runs in a tab of its own. Every other page keeps frame-ancestors 'none' and X-Frame-Options DENY, and
nothing in the request (Referer, Origin, a forwarded host, the query) widens the list."""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.utils.html import escape

from studies.models import AuditEntry, Participant, Recruitment
from studies.participation.way.form_steps import session_start
from tests.participation.conftest import cid, ready

from .conftest import finish

pytestmark = pytest.mark.django_db

SANDBOX = "https://workersandbox.mturk.com"
MTURK = ["https://www.mturk.com", "https://worker.mturk.com", "https://workersandbox.mturk.com"]
FRAMED = {"HTTP_SEC_FETCH_DEST": "iframe", "HTTP_SEC_FETCH_SITE": "cross-site"}
ACCEPTED = {"workerId": "A1B2C3", "assignmentId": "3ASSIGN", "hitId": "3HIT", "turkSubmitTo": SANDBOX}
PREVIEW = {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "3HIT", "turkSubmitTo": SANDBOX}


@pytest.fixture
def mturk_study(panel_study):
    Recruitment.objects.filter(study=panel_study).update(panel="mturk")
    panel_study.description = "Search for documents about aircraft and judge them."
    panel_study.save(update_fields=["description"])
    return panel_study


def join_path(study) -> str:
    return f"/join/{Recruitment.objects.get(study=study).public_token}/"


def frame_ancestors(response) -> list[str]:
    directives = dict(
        part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";") if part.strip()
    )
    return directives["frame-ancestors"].split()


def framed_by_mturk_only(response) -> bool:
    return frame_ancestors(response) == MTURK and "X-Frame-Options" not in response


def never_framed(response) -> bool:
    return frame_ancestors(response) == ["'none'"] and response["X-Frame-Options"] == "DENY"


def nobody_joined(study) -> bool:
    return (
        not Participant.objects.filter(study=study, panel_id="A1B2C3").exists()
        and not AuditEntry.objects.filter(study=study, action="participant_joined").exists()
    )


def test_the_preview_may_be_framed_by_mturk_alone_and_offers_nothing_to_open(client, mturk_study):
    for headers in ({}, FRAMED):
        response = client.get(join_path(mturk_study), PREVIEW, **headers)
        page = response.content.decode()
        assert response.status_code == 200 and framed_by_mturk_only(response)
        assert "Accept the HIT" in page and "aircraft" in page
        assert "open-study" not in page and "/join/" not in page
    assert nobody_joined(mturk_study)


def test_an_accepted_hit_inside_the_frame_shows_a_link_to_a_tab_and_creates_nobody(client, mturk_study):
    response = client.get(join_path(mturk_study), ACCEPTED, **FRAMED)
    page = response.content.decode()
    assert response.status_code == 200 and framed_by_mturk_only(response)
    assert escape(mturk_study.name) in page and "aircraft" in page
    assert 'target="_blank" rel="noopener"' in page and "Open the study in a new tab" in page
    assert nobody_joined(mturk_study)

    link = response.context["open_url"]
    assert urlsplit(link).path == join_path(mturk_study)
    assert {name: values[0] for name, values in parse_qs(urlsplit(link).query).items()} == ACCEPTED
    # The link, opened in a tab of its own (a top-level document), joins as before and is not framable.
    opened = client.get(link, HTTP_SEC_FETCH_DEST="document")
    participant = Participant.objects.get(study=mturk_study, panel_id="A1B2C3")
    assert opened.status_code == 302 and opened["Location"] == f"/p/{participant.access_token}/"
    assert never_framed(opened)
    joined = AuditEntry.objects.get(study=mturk_study, action="participant_joined")
    assert joined.detail["turk_submit_to"] == SANDBOX


def test_the_landing_carries_only_mturk_s_parameters(client, mturk_study):
    response = client.get(join_path(mturk_study), {**ACCEPTED, "next": "https://evil.example"}, **FRAMED)
    assert "evil" not in response.context["open_url"] and "next=" not in response.content.decode()


def test_without_a_frame_an_accepted_hit_joins_as_before(client, mturk_study):
    response = client.get(join_path(mturk_study), ACCEPTED)
    assert response.status_code == 302 and never_framed(response)
    assert Participant.objects.filter(study=mturk_study, panel_id="A1B2C3").exists()


@pytest.mark.parametrize(
    "hostile",
    [
        {"HTTP_REFERER": "https://evil.example/hit"},
        {"HTTP_ORIGIN": "https://evil.example"},
        {"HTTP_REFERER": "https://www.mturk.com.evil.example/"},
        {"HTTP_X_FORWARDED_HOST": "evil.example"},
        {"HTTP_SEC_FETCH_SITE": "same-origin"},
    ],
)
def test_nothing_in_the_request_widens_the_frame_ancestors(client, mturk_study, hostile):
    for query in (PREVIEW, ACCEPTED):
        response = client.get(join_path(mturk_study), query, **FRAMED | hostile)
        assert response.status_code == 200 and framed_by_mturk_only(response)
        assert "evil" not in response["Content-Security-Policy"]


def test_a_refused_arrival_inside_the_frame_is_not_framable(client, mturk_study):
    for query in ({**ACCEPTED, "turkSubmitTo": "https://evil.example"}, {**ACCEPTED, "workerId": "a b"}):
        response = client.get(join_path(mturk_study), query, **FRAMED)
        assert response.status_code == 400 and never_framed(response)
    assert nobody_joined(mturk_study)


def test_another_panel_s_link_in_a_frame_is_not_framable(client, panel_study):
    response = client.get(
        join_path(panel_study), {"PROLIFIC_PID": "a" * 24, "STUDY_ID": "S", "SESSION_ID": "X"}, **FRAMED
    )
    assert response.status_code == 302 and never_framed(response)


def test_every_page_of_the_study_itself_keeps_none_and_deny(client, mturk_study):
    client.get(join_path(mturk_study), ACCEPTED)
    participant = Participant.objects.get(study=mturk_study, panel_id="A1B2C3")
    home = f"/p/{participant.access_token}/"
    consent = client.get(home, **FRAMED)
    assert 'id="consent-accept"' in consent.content.decode() and never_framed(consent)

    ready(participant)
    session_start(
        participant=participant,
        assignment=participant.assignments.order_by("position").first(),
        client_event_id=cid(),
    )
    search = client.get(home, **FRAMED)
    assert 'id="search-app"' in search.content.decode() and never_framed(search)

    finish(participant)
    client.get(f"/p/{participant.access_token}/completion/")
    done = client.get(home, **FRAMED)
    assert 'id="completion"' in done.content.decode() and never_framed(done)
    assert f"form-action 'self' {SANDBOX}" in done["Content-Security-Policy"]
    assert never_framed(client.get(f"/p/{participant.access_token}/completion/", **FRAMED))
