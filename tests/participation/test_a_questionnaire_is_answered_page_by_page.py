"""A questionnaire with page breaks: one page at a time, nothing stored before the last page, the earlier
pages' answers kept when a later page is refused; a choice's "Other (please specify)" keeps its text apart."""

import pytest

from studies.models import Event
from studies.participation.way.form_steps import consent_record

from .conftest import cid

ITEMS = [
    {"name": "age", "label": "Your age", "kind": "integer", "min": 16, "max": 120},
    {
        "name": "gender",
        "label": "Your gender",
        "kind": "choice",
        "choices": ["woman", "man"],
        "other": True,
        "new_page": True,
    },
    {
        "name": "skill",
        "label": "Your searching skill",
        "kind": "scale",
        "min": 1,
        "max": 5,
        "min_label": "novice",
        "max_label": "expert",
        "new_page": True,
    },
]


@pytest.fixture
def paged(participant):
    participant.study.questionnaire = ITEMS
    participant.study.save(update_fields=["questionnaire"])
    consent_record(participant=participant, consent_version="1", client_event_id=cid())
    return participant


def post(client, participant, **data):
    return client.post(f"/p/{participant.access_token}/questionnaire/", {"client_event_id": cid(), **data})


def test_the_first_page_shows_only_its_items(client, paged):
    page = client.get(f"/p/{paged.access_token}/").content.decode()
    assert "Page 1 of 3" in page and "Your age" in page
    assert "Your gender" not in page and "Your searching skill" not in page
    assert ">Next</button>" in page


def test_pages_are_answered_in_turn_and_saved_once_at_the_end(client, paged):
    second = post(client, paged, page="1", age="34")
    assert second.status_code == 200
    text = second.content.decode()
    assert "Page 2 of 3" in text and "Your gender" in text and "Other (please specify)" in text
    assert '<input type="hidden" name="age" value="34">' in text
    paged.refresh_from_db()
    assert paged.questionnaire_answers == {} and not Event.objects.filter(type="questionnaire").exists()

    third = post(client, paged, page="2", age="34", gender="other", **{"gender.other": "agender"})
    text = third.content.decode()
    assert third.status_code == 200 and "Page 3 of 3" in text
    assert "novice" in text and "expert" in text and ">Continue</button>" in text

    done = post(client, paged, page="3", age="34", gender="other", **{"gender.other": "agender"}, skill="4")
    assert done.status_code == 302
    paged.refresh_from_db()
    assert paged.questionnaire_answers == {
        "age": 34,
        "gender": "other",
        "gender.other": "agender",
        "skill": 4,
    }
    assert Event.objects.filter(type="questionnaire").count() == 1


def test_a_refused_page_shows_again_with_the_earlier_answers_kept(client, paged):
    refused = post(client, paged, page="2", age="34", gender="other")
    assert refused.status_code == 400
    text = refused.content.decode()
    assert "Page 2 of 3" in text and "Please say what you mean by other." in text
    assert '<input type="hidden" name="age" value="34">' in text
    paged.refresh_from_db()
    assert paged.questionnaire_answers == {}


def test_a_forged_earlier_answer_sends_the_participant_back_to_its_page(client, paged):
    refused = post(client, paged, page="3", age="7", gender="man", skill="2")
    assert refused.status_code == 400
    text = refused.content.decode()
    assert "Page 1 of 3" in text and "Please give a number from 16 to 120." in text
    assert '<input type="hidden" name="skill" value="2">' in text
    paged.refresh_from_db()
    assert paged.questionnaire_answers == {}


def test_a_form_without_pages_answers_every_item_at_once(client, paged):
    # The API, the simulated searchers and a page opened before the breaks were added send no page number.
    assert post(client, paged, age="40", gender="woman", skill="3").status_code == 302
    paged.refresh_from_db()
    assert paged.questionnaire_answers == {"age": 40, "gender": "woman", "skill": 3}


def test_a_reload_shows_the_page_reached_with_the_answers_so_far(client, paged):
    """After "Next", a reload (a GET of the participant's page) shows the page reached with the earlier
    answers carried, not page 1 empty; saving the last page forgets them, still storing nothing before."""
    post(client, paged, page="1", age="34")
    post(client, paged, page="2", age="34", gender="other", **{"gender.other": "agender <b>"})
    reloaded = client.get(f"/p/{paged.access_token}/").content.decode()
    assert "Page 3 of 3" in reloaded and "Your searching skill" in reloaded
    assert '<input type="hidden" name="age" value="34">' in reloaded
    assert '<input type="hidden" name="gender.other" value="agender &lt;b&gt;">' in reloaded
    paged.refresh_from_db()
    assert paged.questionnaire_answers == {} and not Event.objects.filter(type="questionnaire").exists()

    done = post(
        client, paged, page="3", age="34", gender="other", **{"gender.other": "agender <b>"}, skill="2"
    )
    assert done.status_code == 302
    paged.refresh_from_db()
    assert paged.questionnaire_answers["skill"] == 2
    assert not any(key.startswith("question-draft:") for key in client.session.keys())


def test_a_draft_keeps_only_the_questionnaire_s_fields_cut_short(client, paged):
    post(client, paged, page="1", age="34", intruder="x" * 10, **{"gender.other": "y" * 5000})
    [draft] = [value for key, value in client.session.items() if key.startswith("question-draft:")]
    assert draft["page"] == 2 and set(draft["answers"]) == {"age", "gender.other"}
    assert len(draft["answers"]["gender.other"]) == 2000
    other_browser = client.__class__()
    fresh = other_browser.get(f"/p/{paged.access_token}/").content.decode()
    assert "Page 1 of 3" in fresh  # the draft is this browser's: another starts at page 1


def test_a_withdrawal_forgets_the_drafts_in_this_browser(client, paged):
    post(client, paged, page="1", age="34")
    assert any(key.startswith("question-draft:") for key in client.session.keys())
    client.post(f"/p/{paged.access_token}/withdraw/")
    assert not any(key.startswith("question-draft:") for key in client.session.keys())
