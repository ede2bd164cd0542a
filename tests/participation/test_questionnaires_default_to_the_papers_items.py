"""The pre-study questionnaire (default: the paper's Table
1 items) and the post-task one (default: one 1-5 item)."""

import pytest

from studies.errors import InvalidAnswers, Refused
from studies.participation.way.form_steps import consent_record, questionnaire_save

from .conftest import cid


def consent(participant):
    consent_record(participant=participant, consent_version="1", client_event_id=cid())


def test_the_default_questionnaire_asks_the_table_1_items(client, participant):
    consent(participant)
    response = client.get(f"/p/{participant.access_token}/")
    content = response.content.decode()
    assert "Experience using Internet search engines (years)" in content
    assert "Professional experience in the domain (years)" in content
    assert "Your searching skill (1 = low, 5 = high)" in content


def test_answers_are_checked_and_the_form_shown_again(client, participant):
    consent(participant)
    response = client.post(
        f"/p/{participant.access_token}/questionnaire/",
        {"search_engine_years": "seven", "domain_years": "21", "search_skill": "9", "client_event_id": cid()},
    )
    assert response.status_code == 400
    assert b"Please give a whole number." in response.content and b"from 1 to 5" in response.content
    participant.refresh_from_db()
    assert participant.questionnaire_answers == {}


def test_valid_answers_are_saved_and_lead_to_the_first_scenario(client, participant):
    consent(participant)
    response = client.post(
        f"/p/{participant.access_token}/questionnaire/",
        {"search_engine_years": "7", "domain_years": "21", "search_skill": "2", "client_event_id": cid()},
    )
    assert response.status_code == 302
    participant.refresh_from_db()
    assert participant.questionnaire_answers == {
        "search_engine_years": 7,
        "domain_years": 21,
        "search_skill": 2,
    }
    first = participant.assignments.order_by("position").first()
    page = client.get(f"/p/{participant.access_token}/").content.decode()
    assert first.scenario.text in page and "Start searching" in page


def test_a_study_questionnaire_replaces_the_default(participant):
    study = participant.study
    study.questionnaire = [
        {"name": "role", "label": "Your role", "kind": "choice", "choices": ["GP", "nurse"]}
    ]
    study.save(update_fields=["questionnaire"])
    participant.study.refresh_from_db()
    consent(participant)
    with pytest.raises(InvalidAnswers) as refused:
        questionnaire_save(participant=participant, answers={"role": "pilot"}, client_event_id=cid())
    assert refused.value.errors == {"role": "Please pick one of the options."}
    questionnaire_save(participant=participant, answers={"role": "GP"}, client_event_id=cid())
    assert participant.questionnaire_answers == {"role": "GP"}


def test_the_questionnaire_waits_for_consent(participant):
    with pytest.raises(Refused, match="consent"):
        questionnaire_save(participant=participant, answers={}, client_event_id=cid())
