"""Who may see what: researchers only their studies (404 otherwise), anonymous callers nothing, participants
only their own endpoints and sessions."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from .api_helpers import client_for, participant_client

pytestmark = pytest.mark.django_db


def study_urls(study):
    session = study.participants.get(code="P001").assignments.get(position=1).session
    return [
        f"/api/studies/{study.pk}/",
        f"/api/studies/{study.pk}/scenarios/",
        f"/api/studies/{study.pk}/scenarios/{study.scenarios.first().pk}/",
        f"/api/studies/{study.pk}/systems/",
        f"/api/studies/{study.pk}/grade-levels/",
        f"/api/studies/{study.pk}/participants/",
        f"/api/studies/{study.pk}/participants/{study.participants.first().pk}/",
        f"/api/studies/{study.pk}/sessions/",
        f"/api/studies/{study.pk}/sessions/{session.pk}/",
        f"/api/studies/{study.pk}/queries/",
        f"/api/studies/{study.pk}/judgments/",
        f"/api/studies/{study.pk}/events/",
        f"/api/studies/{study.pk}/reference-versions/",
    ]


def test_it_refuses_anonymous_callers(worked_study):
    for url in ["/api/studies/", *study_urls(worked_study)]:
        assert APIClient().get(url).status_code in (401, 403), url


def test_a_researcher_of_another_study_gets_404_for_everything_in_it(worked_study, charlie):
    client = client_for(charlie)
    assert client.get("/api/studies/").json()["results"] == []
    for url in study_urls(worked_study):
        assert client.get(url).status_code == 404, url
    assert client.post(f"/api/studies/{worked_study.pk}/participants/enrol/", {"count": 1}).status_code == 404
    assert worked_study.participants.count() == 2


def test_owner_and_co_researcher_see_the_study(worked_study, alice, bob):
    for user in (alice, bob):
        client = client_for(user)
        assert [s["id"] for s in client.get("/api/studies/").json()["results"]] == [worked_study.pk]
        for url in study_urls(worked_study):
            assert client.get(url).status_code == 200, url


def test_a_researcher_signs_in_with_a_token(worked_study, alice):
    client = APIClient()
    response = client.post("/api/auth/token/", {"username": "alice", "password": "alice-password"})
    assert response.status_code == 200
    token = response.json()["token"]
    assert Token.objects.get(user=alice).key == token
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get(f"/api/studies/{worked_study.pk}/sessions/").status_code == 200
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert client.get(f"/api/studies/{worked_study.pk}/sessions/").status_code in (401, 403)


def test_a_participant_token_opens_only_the_participant_endpoints(worked_study):
    participant = worked_study.participants.get(code="P001")
    client = participant_client(participant)
    me = client.get("/api/participant/")
    assert me.status_code == 200
    assert me.json()["code"] == "P001"
    assert "access_token" not in me.json()
    for url in study_urls(worked_study):
        assert client.get(url).status_code in (401, 403), url


def test_the_participant_endpoints_refuse_researchers_and_unknown_tokens(worked_study, alice):
    assert client_for(alice).get("/api/participant/").status_code in (401, 403)
    anonymous = APIClient()
    assert anonymous.post("/api/participant/events/", {"events": []}, format="json").status_code == 401
    anonymous.credentials(HTTP_AUTHORIZATION="Participant nope")
    response = anonymous.post(
        "/api/participant/events/", {"events": [{"id": "a", "type": "x"}]}, format="json"
    )
    assert response.status_code == 401
    assert worked_study.participants.get(code="P001").events.filter(client_event_id="a").count() == 0


def test_a_participant_cannot_log_into_another_participants_session(worked_study):
    owner = worked_study.participants.get(code="P001")
    other = worked_study.participants.get(code="P002")
    other.consented_at, other.consent_version = owner.consented_at, "1"
    other.save()
    session = owner.assignments.get(position=1).session
    response = participant_client(other).post(
        "/api/participant/events/",
        {
            "events": [
                {"id": "e1", "type": "tab_hidden", "session": session.pk},
                {"id": "e2", "type": "judgment", "session": session.pk, "data": {"doc": "d1", "grade": 1}},
            ]
        },
        format="json",
    )
    assert response.status_code == 200
    acks = response.json()["acks"]
    assert [a["ok"] for a in acks] == [False, False]
    assert all("not one of your search sessions" in a["refused"] for a in acks)
    assert not session.events.filter(participant=other).exists()
    assert session.judgments.count() == 2  # unchanged


def test_an_object_of_another_study_is_404_under_ones_own_study(worked_study, charlie):
    from studies.design import services

    own = services.study_create(owner=charlie, name="Charlie's study")
    client = client_for(charlie)
    session = worked_study.participants.get(code="P001").assignments.get(position=1).session
    scenario = worked_study.scenarios.first()
    participant = worked_study.participants.first()
    for url in [
        f"/api/studies/{own.pk}/sessions/{session.pk}/",
        f"/api/studies/{own.pk}/scenarios/{scenario.pk}/",
        f"/api/studies/{own.pk}/participants/{participant.pk}/",
    ]:
        assert client.get(url).status_code == 404, url
    assert client.patch(f"/api/studies/{own.pk}/scenarios/{scenario.pk}/", {"title": "x"}).status_code == 404
    assert client.post(f"/api/studies/{own.pk}/participants/{participant.pk}/withdraw/").status_code == 404
    assert client.get(f"/api/studies/{own.pk}/sessions/").json()["count"] == 0
