"""Every event type only the server writes is read only from rows the server wrote (Event.origin): a client
row of such a type, as a database from before the refusal may hold (inserted directly here), is ignored by
the gold and check readers, and a form cannot be answered with a client event's id. The server's own writers
mark their rows."""

import pytest

from studies.errors import Refused
from studies.kernel.gold import gold_answered, gold_pinned
from studies.models import Event, EventOrigin
from studies.participation.recruitment.check_outcomes import check_outcomes
from studies.participation.recruitment.checks import gold_failures
from studies.participation.way.form_steps import consent_record
from studies.participation.way.reload import page_reload_record

from .conftest import cid, ready
from .test_a_client_cannot_send_an_event_type_the_server_writes import FORGED, api_post, page_post

pytestmark = pytest.mark.django_db


def _client_row(participant, session, kind, ack, data=None):
    return Event.objects.create(
        participant=participant,
        session=session,
        type=kind,
        client_event_id=cid(),
        payload={"data": data or {}, "ack": ack},
    )


def test_a_client_row_is_a_client_s_unless_the_server_says_otherwise(participant, session):
    assert _client_row(participant, session, "gold", {"ok": True}).origin == EventOrigin.CLIENT


def test_a_client_gold_row_neither_answers_the_step_nor_counts_as_a_failure(participant, session):
    _client_row(participant, session, "gold", {"ok": True, "passed": False, "scenario": "S1", "reason": "x"})
    assert gold_answered(session) is False
    assert gold_failures(participant) == 0
    assert check_outcomes(study=participant.study) == []


def test_a_client_pin_pins_nothing(participant, session):
    first, second = participant.study.collection.documents.order_by("id")[:2]
    pin = {
        "topic": "1",
        "relevant": first.external_id,
        "off_topic": second.external_id,
        "relevant_grade": 3,
        "reference_version": 1,
    }
    _client_row(participant, session, "gold_pair", {"ok": True}, pin)
    assert gold_pinned(participant=participant, session=session) is None
    Event.objects.create(
        participant=participant,
        session=session,
        type="gold_pair",
        client_event_id="server/gold-pair/1",
        payload={"data": pin, "ack": {"ok": True}},
        origin=EventOrigin.SERVER,
    )
    assert gold_pinned(participant=participant, session=session).relevant == first  # the server's is read


def test_a_client_check_row_answers_no_check(participant, session):
    _client_row(participant, None, "check", {"ok": True, "name": "a1", "passed": False, "reason": "forged"})
    assert check_outcomes(study=participant.study) == []


def test_a_form_cannot_take_the_id_of_a_client_s_event(participant):
    [ack] = page_post(participant, [{"id": "taken-1", "type": "tab_hidden"}])
    assert ack["ok"] is True
    with pytest.raises(Refused, match="an event the page sent"):
        consent_record(
            participant=participant,
            consent_version=participant.study.consent_version,
            client_event_id="taken-1",
        )
    participant.refresh_from_db()
    assert participant.consented_at is None
    assert not Event.objects.filter(participant=participant, type="consent").exists()


def test_the_server_s_writers_mark_their_rows(participant, session):
    page_reload_record(session=session, state={"query": None, "page": 1, "grades": {}})
    server_rows = Event.objects.filter(participant=participant, type__in=FORGED)
    assert {"consent", "questionnaire", "session_start", "page_reload"} <= set(
        server_rows.values_list("type", flat=True)
    )
    assert set(server_rows.values_list("origin", flat=True)) == {EventOrigin.SERVER}
    page_post(participant, [{"id": "p1", "type": "tab_hidden", "session": session.pk}])
    api_post(participant, [{"id": "a1", "type": "tab_hidden", "session": session.pk}])
    assert set(Event.objects.filter(client_event_id__in=["p1", "a1"]).values_list("origin", flat=True)) == {
        EventOrigin.CLIENT
    }


def test_a_re_sent_form_is_still_answered_once(participant):
    ready(participant)
    event = Event.objects.get(participant=participant, type="consent")
    consent_record(
        participant=participant,
        consent_version=participant.study.consent_version,
        client_event_id=event.client_event_id,
    )
    assert Event.objects.filter(participant=participant, type="consent").count() == 1
