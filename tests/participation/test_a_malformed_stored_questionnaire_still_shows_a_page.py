"""A questionnaire stored malformed (before the API checked it, or straight in the database) no longer answers
every participant 500: the page shows the valid items, or the paper's defaults when none is valid."""

import pytest

from studies.participation.way.form_steps import consent_record, questionnaire_items

from .conftest import cid

pytestmark = pytest.mark.django_db

ROLE = {"name": "role", "label": "Your role", "kind": "choice", "choices": ["GP", "nurse"]}


def _store(participant, field, value):
    type(participant.study).objects.filter(pk=participant.study.pk).update(**{field: value})
    participant.study.refresh_from_db()


@pytest.mark.parametrize(
    "stored",
    [
        [{"label": "no name"}, ROLE],
        ["age", ROLE, {"name": "s", "label": "S", "kind": "scale", "min": "one", "max": 5}],
        [ROLE, {"name": "s", "label": "S", "kind": "scale", "min": 1, "max": 10**12}],
        [ROLE, {"name": "role", "label": "Again"}],
    ],
)
def test_the_valid_items_are_shown_and_answered(client, participant, stored):
    _store(participant, "questionnaire", stored)
    consent_record(participant=participant, consent_version="1", client_event_id=cid())
    page = client.get(f"/p/{participant.access_token}/")
    assert page.status_code == 200
    assert b"Your role" in page.content and b"Again" not in page.content
    answered = client.post(
        f"/p/{participant.access_token}/questionnaire/", {"role": "GP", "client_event_id": cid()}
    )
    assert answered.status_code == 302
    participant.refresh_from_db()
    assert participant.questionnaire_answers == {"role": "GP"}


@pytest.mark.parametrize("stored", [{"role": ROLE}, "a text", [1, 2], [{"name": 5}]])
def test_nothing_valid_falls_back_to_the_papers_items(client, participant, stored):
    _store(participant, "questionnaire", stored)
    consent_record(participant=participant, consent_version="1", client_event_id=cid())
    page = client.get(f"/p/{participant.access_token}/")
    assert page.status_code == 200
    assert b"Experience using Internet search engines (years)" in page.content


def test_the_post_task_page_too(participant):
    _store(
        participant, "post_task_questionnaire", [{"name": "x", "label": "X", "kind": "scale", "min": 1}, ROLE]
    )
    assert questionnaire_items(study=participant.study, post_task=True) == [ROLE]
