"""POST /api/participant/events/: an external interface logs as the built-in one does; a re-sent batch stores
nothing twice and gets the same acknowledgements."""

import pytest
from django.utils import timezone

from studies.models import Event, Judgment, Query, SearchSession, ShownResult

from .api_helpers import participant_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def open_session(worked_study):
    """P002, consented and questioned, searching their first scenario (one query with four results)."""
    participant = worked_study.participants.get(code="P002")
    participant.consented_at, participant.consent_version = timezone.now(), "1"
    participant.questionnaire_answers = {"search_skill": 3}
    participant.save()
    assignment = participant.assignments.get(position=1)
    session = SearchSession.objects.create(assignment=assignment, started_at=timezone.now())
    query = Query.objects.create(session=session, position=1, text="wing", issued_at=timezone.now())
    documents = list(worked_study.collection.documents.order_by("external_id")[:4])
    ShownResult.objects.bulk_create(
        ShownResult(query=query, rank=r, document=d, shown_at=timezone.now())
        for r, d in enumerate(documents, start=1)
    )
    return session


def batch(session):
    return {
        "events": [
            {
                "id": "x-1",
                "type": "document_open",
                "session": session.pk,
                "seq": 1,
                "data": {"doc": "d1", "query": 1, "rank": 1},
            },
            {
                "id": "x-2",
                "type": "document_close",
                "session": session.pk,
                "seq": 2,
                "data": {"doc": "d1", "query": 1, "rank": 1, "dwell_ms": 4200},
            },
            {
                "id": "x-3",
                "type": "judgment",
                "session": session.pk,
                "seq": 3,
                "data": {"doc": "d1", "grade": 2},
            },
            {
                "id": "x-4",
                "type": "scan_mark",
                "session": session.pk,
                "seq": 4,
                "data": {"query": 1, "rank": 3},
            },
            {"id": "x-5", "type": "tab_hidden", "session": session.pk, "seq": 5, "time": 1767225600000},
            {
                "id": "x-6",
                "type": "judgment",
                "session": session.pk,
                "seq": 6,
                "data": {"doc": "d1", "grade": 8},
            },
            {"type": "judgment"},
        ]
    }


def test_a_resent_batch_stores_nothing_twice_and_answers_the_same(open_session):
    participant = open_session.assignment.participant
    client = participant_client(participant)
    first = client.post("/api/participant/events/", batch(open_session), format="json")
    assert first.status_code == 200
    acks = first.json()["acks"]
    assert [a["ok"] for a in acks] == [True, True, True, True, True, False, False]
    assert "grade is one of" in acks[5]["refused"] and "id" in acks[6]["error"]
    stored = Event.objects.filter(participant=participant).count()
    assert stored == 6  # the refused judgment is stored with its refusal; the malformed one is not
    assert Judgment.objects.get(session=open_session).grade == 2
    again = client.post("/api/participant/events/", batch(open_session), format="json")
    assert again.json() == first.json()
    assert Event.objects.filter(participant=participant).count() == stored
    assert Judgment.objects.filter(session=open_session).count() == 1
    assert Judgment.objects.get(session=open_session).history.count() == 1
    assert Query.objects.get(session=open_session).scan_mark_rank == 3


def test_a_participant_starts_their_session_through_the_api(worked_study):
    participant = worked_study.participants.get(code="P002")
    participant.consented_at, participant.consent_version = timezone.now(), "1"
    participant.questionnaire_answers = {"search_skill": 3}
    participant.save()
    client = participant_client(participant)
    assert (
        client.post("/api/participant/sessions/", {"assignment": 2, "client_event_id": "s-2"}).status_code
        == 409
    )
    started = client.post("/api/participant/sessions/", {"assignment": 1, "client_event_id": "s-1"})
    assert started.status_code == 201
    again = client.post("/api/participant/sessions/", {"assignment": 1, "client_event_id": "s-1"})
    assert again.json()["id"] == started.json()["id"]
    assert SearchSession.objects.filter(assignment__participant=participant).count() == 1


def test_a_batch_must_be_a_list_of_events(open_session):
    client = participant_client(open_session.assignment.participant)
    assert client.post("/api/participant/events/", {"events": "x"}, format="json").status_code == 400
    assert client.post("/api/participant/events/", {"events": []}, format="json").status_code == 400
    # Past the 200th, an event is answered "send it again" (once silently dropped); each malformed one is
    # refused on its own.
    events = [{"id": f"t{n}", "type": "tab_hidden", "session": open_session.pk} for n in range(200)] + [{}]
    acks = client.post("/api/participant/events/", {"events": events}, format="json").json()["acks"]
    assert len(acks) == 201 and all(a["ok"] for a in acks[:200]) and "at most 200" in acks[200]["retry_later"]
    acks = client.post("/api/participant/events/", {"events": [{}, 3]}, format="json").json()["acks"]
    assert [a["error"] for a in acks] == ["id: 1..64 letters, digits or _.:-", "an event is a JSON object"]
    too_many = client.post("/api/participant/events/", {"events": [{}] * 1001}, format="json")
    assert too_many.status_code == 413 and "at most 200 events" in too_many.json()["events"]
