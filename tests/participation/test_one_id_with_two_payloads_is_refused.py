"""Two events under one client id with different content: the second was acknowledged as stored and silently
not stored. Now it is refused for that event alone, with the reason, in one batch and across batches, on both
events endpoints; the same event sent again is still answered as stored, and nothing is stored twice."""

import pytest

from studies.models import Event
from studies.participation.events.ingest_batch import ID_TAKEN

from .test_a_client_cannot_send_an_event_type_the_server_writes import api_post, page_post

pytestmark = pytest.mark.django_db
SENDERS = pytest.mark.parametrize("send", [page_post, api_post], ids=["page", "api"])


def note(session, text, kind="note"):
    return {"id": "e-1", "type": kind, "session": session.pk, "data": {"text": text}}


@SENDERS
def test_the_second_payload_in_one_batch_is_refused_with_a_reason(participant, session, send):
    first, second = send(participant, [note(session, "first"), note(session, "second")])
    assert first["ok"] is True
    assert second == {"id": "e-1", "ok": False, "error": ID_TAKEN.format(id="e-1")}
    [stored] = Event.objects.filter(participant=participant, client_event_id="e-1")
    assert stored.payload["data"] == {"text": "first"}


@SENDERS
def test_another_payload_in_a_later_batch_is_refused_too(participant, session, send):
    [first] = send(participant, [note(session, "first")])
    assert first["ok"] is True
    for changed in (
        note(session, "second"),
        note(session, "first", kind="tab_hidden"),
        {**note(session, "first"), "session": None},
    ):
        [again] = send(participant, [changed])
        assert again == {"id": "e-1", "ok": False, "error": ID_TAKEN.format(id="e-1")}
    assert Event.objects.get(participant=participant, client_event_id="e-1").payload["data"] == {
        "text": "first"
    }


@SENDERS
def test_the_same_event_sent_again_is_answered_as_stored(participant, session, send):
    [first] = send(participant, [note(session, "same")])
    [again, twice] = send(participant, [note(session, "same"), note(session, "same")])
    assert first == again == twice
    assert first["ok"] is True
    assert Event.objects.filter(participant=participant, client_event_id="e-1").count() == 1


def test_a_re_sent_refusal_gets_the_same_refusal(participant, session):
    gone = {"id": "q-1", "type": "query", "session": 10**9, "data": {"text": "x"}}
    [first] = page_post(participant, [gone])
    [again] = page_post(participant, [gone])
    assert first == again
    assert first["ok"] is False and "refused" in first


def test_an_event_stored_before_the_digest_was_kept_answers_as_a_re_send(participant, session):
    Event.objects.create(
        participant=participant,
        session=session,
        type="note",
        client_event_id="e-1",
        payload={"data": {"text": "old"}, "ack": {"ok": True}},
    )
    [again] = page_post(participant, [note(session, "whatever it held")])
    assert again == {"id": "e-1", "ok": True}
