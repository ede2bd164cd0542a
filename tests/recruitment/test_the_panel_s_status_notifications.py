"""The panel's status notifications: authenticated by the study's secret, idempotent (a replay answers what
the first one did and changes nothing), out of order handled by their time; a return or a time-out ends a
participant who has not ended and frees their row; malformed items are refused one by one with a reason."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from studies.design.rows import row_counts
from studies.models import AuditEntry, PanelNotification, Participant, Recruitment
from studies.participation.recruitment.panel_reconciliation import reconciliation
from studies.participation.recruitment.states import participant_state_sync

from .conftest import finish, join

pytestmark = pytest.mark.django_db


def soon(seconds):
    """A time after the study was made and within the window ahead of the server's clock."""
    return (timezone.now() + timedelta(seconds=seconds)).isoformat()


def post(client, study, body, secret=None):
    found = Recruitment.objects.get(study=study)
    return client.post(
        f"/join/{found.public_token}/status/",
        json.dumps(body) if not isinstance(body, bytes) else body,
        content_type="application/json",
        HTTP_X_SESSIONLAB_SECRET=found.status_secret if secret is None else secret,
    )


def test_a_return_ends_the_participant_and_frees_their_row(client, panel_study):
    joined = join(panel_study).participant
    response = post(
        client, panel_study, {"id": "n1", "participant_id": joined.panel_id, "status": "RETURNED"}
    )
    assert response.status_code == 200
    [result] = response.json()["results"]
    assert result["ok"] and result["applied"] and result["state"] == "returned"
    joined.refresh_from_db()
    assert (joined.state, joined.panel_status) == ("returned", "returned")
    assert row_counts(study=panel_study).open_freed == [(joined.plan_row, joined.pk)]


def test_a_replayed_notification_changes_nothing(client, panel_study):
    joined = join(panel_study).participant
    body = {"id": "n1", "participant_id": joined.panel_id, "status": "returned"}
    first = post(client, panel_study, body).json()["results"][0]
    audits = AuditEntry.objects.count()
    again = post(client, panel_study, body).json()["results"][0]
    assert again["replayed"] and again["state"] == first["state"]
    assert AuditEntry.objects.count() == audits and PanelNotification.objects.count() == 1


def test_an_older_notification_after_a_newer_one_is_kept_but_not_applied(client, panel_study):
    joined = finish(join(panel_study).participant)
    participant_state_sync(participant=Participant.objects.get(pk=joined.pk))
    newer = {
        "id": "n2",
        "participant_id": joined.panel_id,
        "status": "approved",
        "time": soon(120),
    }
    older = {
        "id": "n1",
        "participant_id": joined.panel_id,
        "status": "awaiting_review",
        "time": soon(60),
    }
    results = post(client, panel_study, {"notifications": [newer, older]}).json()["results"]
    assert results[0]["applied"] and not results[1]["applied"] and "older" in results[1]["note"]
    joined.refresh_from_db()
    assert joined.panel_status == "approved" and joined.state == "completed"


def test_a_return_after_completing_keeps_the_data_and_shows_a_disagreement(client, panel_study):
    joined = finish(join(panel_study).participant)
    participant_state_sync(participant=Participant.objects.get(pk=joined.pk))
    post(client, panel_study, {"id": "n1", "participant_id": joined.panel_id, "status": "returned"})
    joined.refresh_from_db()
    assert joined.state == "completed"
    [row] = reconciliation(study=panel_study)
    assert row.participant_code == joined.code and "intention to treat" in row.reason


def test_a_forged_or_missing_secret_is_refused_and_changes_nothing(client, panel_study):
    joined = join(panel_study).participant
    body = {"id": "n1", "participant_id": joined.panel_id, "status": "returned"}
    for secret in ("", "wrong", Recruitment.objects.get(study=panel_study).status_secret[:-1] + "x", "é"):
        assert post(client, panel_study, body, secret=secret).status_code == 403
    joined.refresh_from_db()
    assert joined.state == "started" and not PanelNotification.objects.exists()


def test_another_study_s_secret_does_not_open_this_one(client, panel_study, alice):
    from studies.design import services

    other = services.study_create(owner=alice, name="Other")
    other_secret = Recruitment.objects.create(study=other).status_secret
    joined = join(panel_study).participant
    response = post(
        client, panel_study, {"participant_id": joined.panel_id, "status": "returned"}, secret=other_secret
    )
    assert response.status_code == 403


def test_each_malformed_item_is_refused_with_its_reason(client, panel_study):
    joined = join(panel_study).participant
    items = [
        "not an object",
        {"participant_id": "../x", "status": "returned"},
        {"participant_id": joined.panel_id, "status": "paid"},
        {"participant_id": joined.panel_id, "status": "returned", "time": "yesterday"},
        {"participant_id": joined.panel_id, "status": "returned", "time": "2026-11-25T10:00:00"},
        {"participant_id": joined.panel_id, "status": "returned", "id": "x" * 201},
        {"participant_id": joined.panel_id, "status": "returned", "id": 7},
        {"participant_id": "unknownid", "status": "approved", "id": "u1"},
    ]
    results = post(client, panel_study, {"notifications": items}).json()["results"]
    assert [r["ok"] for r in results] == [False] * 7 + [True]
    assert [r["error"].split(":")[0] for r in results[:7]] == [
        "a notification is an object",
        "participant_id",
        "status",
        "time",
        "time",
        "id",
        "id",
    ]
    assert results[7]["note"] == "no participant with this panel id"
    joined.refresh_from_db()
    assert joined.state == "started"


@pytest.mark.parametrize(
    "body", [b"{", b"\xff\xfe", b"[1, 2]", b'{"notifications": 3}', b"[" * 5000 + b"]" * 5000]
)
def test_an_unreadable_body_is_a_400_never_a_500(client, panel_study, body):
    assert post(client, panel_study, body).status_code == 400
