"""Once participants answered a questionnaire, an answered item keeps its name, kind, choices and range (its
column and what its answers mean), on the set-up page and through the API alike; wording, anchors, order and
pages still change (studies/questionnaires/edits.py)."""

import json

from studies.models import Participant
from studies.questionnaires.edits import answered_change_errors
from tests.factories import study_enrolled
from tests.interchange.api_helpers import client_for

ITEMS = [
    {"name": "role", "label": "Your role", "kind": "choice", "choices": ["GP", "nurse"]},
    {"name": "skill", "label": "Skill", "kind": "scale", "min": 1, "max": 5},
    {"name": "unanswered", "label": "Notes", "kind": "text", "required": False},
]
URL = "/studies/{}/setup/questionnaires/"


def answered(designed_study):
    designed_study.questionnaire = [dict(i) for i in ITEMS]
    designed_study.save(update_fields=["questionnaire"])
    study_enrolled(designed_study, 2)
    Participant.objects.filter(study=designed_study).update(questionnaire_answers={"role": "GP", "skill": 3})
    return designed_study


def test_removing_or_renaming_an_answered_item_is_refused(alice_client, designed_study):
    study = answered(designed_study)
    url = URL.format(study.slug)
    removed = alice_client.post(
        url, {"action": "remove", "which": "questionnaire", "name": "skill"}, follow=True
    )
    assert "skill: 2 answers hold this item; it cannot be removed or renamed" in removed.content.decode()
    renamed = alice_client.post(
        url,
        {
            "action": "item",
            "item-which": "questionnaire",
            "item-original": "skill",
            "item-name": "skill_level",
            "item-label": "Skill",
            "item-kind": "scale",
            "item-min": "1",
            "item-max": "5",
            "item-required": "on",
        },
    )
    assert renamed.status_code == 400 and "cannot be removed or renamed" in renamed.content.decode()
    study.refresh_from_db()
    assert study.questionnaire == ITEMS


def test_wording_order_pages_and_unanswered_items_still_change(alice_client, designed_study):
    study = answered(designed_study)
    url = URL.format(study.slug)
    reworded = alice_client.post(
        url,
        {
            "action": "item",
            "item-which": "questionnaire",
            "item-original": "skill",
            "item-name": "skill",
            "item-label": "Your searching skill",
            "item-kind": "scale",
            "item-min": "1",
            "item-max": "7",
            "item-min_label": "novice",
            "item-max_label": "expert",
            "item-required": "on",
        },
    )
    assert reworded.status_code == 302
    alice_client.post(url, {"action": "up", "which": "questionnaire", "name": "skill"})
    alice_client.post(url, {"action": "page_break", "which": "questionnaire", "name": "unanswered"})
    alice_client.post(url, {"action": "remove", "which": "questionnaire", "name": "unanswered"})
    study.refresh_from_db()
    assert [i["name"] for i in study.questionnaire] == ["skill", "role"]
    assert study.questionnaire[0]["label"] == "Your searching skill" and study.questionnaire[0]["max"] == 7


def test_the_api_asks_the_same_rule(alice, designed_study):
    study = answered(designed_study)
    response = client_for(alice).patch(
        f"/api/studies/{study.pk}/", {"questionnaire": [ITEMS[1], ITEMS[2]]}, format="json"
    )
    assert response.status_code == 400 and "role: 2 answers hold this item" in str(response.json()["detail"])
    study.refresh_from_db()
    assert study.questionnaire == ITEMS


def test_kind_choices_and_range_of_an_answered_item_are_kept():
    counts = {"role": 1, "skill": 4}
    changed = [
        {**ITEMS[0], "choices": ["GP"]},
        {**ITEMS[1], "min": 2},
    ]
    errors = answered_change_errors(ITEMS, changed, counts)
    assert errors == [
        "role: 1 answer hold this item; its choices cannot lose nurse",
        "skill: 4 answers hold this item; its range may widen, not narrow",
    ]
    kind = answered_change_errors(ITEMS, [ITEMS[0], {**ITEMS[1], "kind": "integer"}], counts)
    assert kind == ["skill: 4 answers hold this item; its kind cannot change"]
    assert (
        answered_change_errors(ITEMS, [{**ITEMS[0], "choices": ["GP", "nurse", "other"]}, ITEMS[1]], counts)
        == []
    )


def test_the_admin_asks_the_same_rule(admin_client, designed_study):
    from tests.design.test_the_admin_keeps_a_locked_design import _change_form

    study = answered(designed_study)
    url, data = _change_form(admin_client, study)
    response = admin_client.post(url, {**data, "questionnaire": json.dumps([ITEMS[0], ITEMS[2]])})
    assert response.status_code == 200
    assert "skill: 2 answers hold this item" in response.content.decode()
    study.refresh_from_db()
    assert study.questionnaire == ITEMS
    reworded = [ITEMS[0], {**ITEMS[1], "label": "Skill (1-5)"}, ITEMS[2]]
    assert admin_client.post(url, {**data, "questionnaire": json.dumps(reworded)}).status_code == 302
    study.refresh_from_db()
    assert study.questionnaire == reworded


def test_the_default_questionnaire_s_answers_are_protected_too(alice, designed_study):
    """A study that stores no questionnaire asks the default one; its answers hold its items as a stored
    questionnaire's would (before, the rule compared against the empty stored list and let anything pass)."""
    assert designed_study.questionnaire in ([], None)
    study_enrolled(designed_study, 2)
    Participant.objects.filter(study=designed_study).update(
        questionnaire_answers={"search_engine_years": 12, "domain_years": 3, "search_skill": 4}
    )
    api = client_for(alice)
    dropped = api.patch(f"/api/studies/{designed_study.pk}/", {"questionnaire": ITEMS}, format="json")
    detail = str(dropped.json()["detail"])
    assert dropped.status_code == 400, dropped.json()
    assert "search_skill: 2 answers hold this item; it cannot be removed or renamed" in detail
    designed_study.refresh_from_db()
    assert designed_study.questionnaire in ([], None)
    from studies.questionnaires.items import DEFAULT_QUESTIONNAIRE

    kept = [*DEFAULT_QUESTIONNAIRE, ITEMS[2]]
    assert (
        api.patch(f"/api/studies/{designed_study.pk}/", {"questionnaire": kept}, format="json").status_code
        == 200
    )
