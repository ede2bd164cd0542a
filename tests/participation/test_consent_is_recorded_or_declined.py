"""The private link opens on the consent text; accepting
records its version and time, declining ends politely."""

import pytest

from studies.errors import Refused
from studies.models import Event
from studies.participation.way.form_steps import consent_record, questionnaire_save

from .conftest import cid


def url(participant, name=""):
    return f"/p/{participant.access_token}/" + (f"{name}/" if name else "")


def test_the_link_shows_the_consent_text_and_its_version(client, participant):
    response = client.get(url(participant))
    assert response.status_code == 200
    assert b"Consent text." in response.content and b"version 1" in response.content


def test_accepting_records_the_version_and_time(client, participant):
    response = client.post(
        url(participant, "consent"),
        {"decision": "accept", "consent_version": "1", "client_event_id": "c-1", "sequence": "1"},
    )
    assert response.status_code == 302
    participant.refresh_from_db()
    assert participant.consent_version == "1" and participant.consented_at is not None
    event = Event.objects.get(participant=participant)
    assert (event.type, event.client_event_id, event.sequence) == ("consent", "c-1", 1)


def test_a_resubmitted_consent_form_is_stored_once(client, participant):
    form = {"decision": "accept", "consent_version": "1", "client_event_id": "c-1"}
    client.post(url(participant, "consent"), form)
    client.post(url(participant, "consent"), form)
    assert Event.objects.filter(participant=participant).count() == 1


def test_declining_ends_politely_and_records_nothing_else(client, participant):
    client.post(url(participant, "consent"), {"decision": "decline", "client_event_id": cid()})
    participant.refresh_from_db()
    assert participant.declined_at is not None and participant.consented_at is None
    response = client.get(url(participant))
    assert b"You chose not to take part" in response.content
    with pytest.raises(Refused):
        questionnaire_save(participant=participant, answers={}, client_event_id=cid())


def test_consent_to_an_outdated_text_is_refused(participant):
    with pytest.raises(Refused, match="consent text has changed"):
        consent_record(participant=participant, consent_version="0", client_event_id=cid())
    participant.refresh_from_db()
    assert participant.consented_at is None


def test_a_consent_form_without_a_choice_records_nothing(client, participant):
    response = client.post(url(participant, "consent"), {"consent_version": "1", "client_event_id": cid()})
    assert response.status_code == 302
    participant.refresh_from_db()
    assert participant.consented_at is None and participant.declined_at is None
    assert not Event.objects.exists()
