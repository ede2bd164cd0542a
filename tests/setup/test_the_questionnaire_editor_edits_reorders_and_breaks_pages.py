"""The set-up page's questionnaire editor: edit an item in place, move it, start a page at it, preview the
questionnaire as a participant sees it (storing nothing); a bad edit is refused at its field, changing
nothing."""

from studies.models import Event, Participant

ITEMS = [
    {"name": "age", "label": "Age", "kind": "integer", "min": 16, "max": 99},
    {"name": "role", "label": "Your role", "kind": "choice", "choices": ["GP", "nurse"]},
    {"name": "skill", "label": "Skill", "kind": "scale", "min": 1, "max": 5},
]
URL = "/studies/{}/setup/questionnaires/"


def with_items(study):
    study.questionnaire = [dict(item) for item in ITEMS]
    study.save(update_fields=["questionnaire"])
    return study


def edit(client, study, original, **fields):
    data = {"action": "item", "item-which": "questionnaire", "item-original": original, "item-required": "on"}
    data.update({f"item-{key}": value for key, value in fields.items()})
    return client.post(URL.format(study.slug), data)


def test_an_item_is_edited_in_place_with_anchors_and_other(alice_client, study):
    with_items(study)
    page = alice_client.get(URL.format(study.slug) + "?edit=questionnaire:skill").content.decode()
    assert "Edit question" in page and 'value="Skill"' in page
    assert (
        'type="hidden" name="item-which" value="questionnaire"' in page
    )  # an edit stays in its questionnaire
    response = edit(
        alice_client,
        study,
        "skill",
        name="skill",
        label="Your searching skill",
        kind="scale",
        min="1",
        max="7",
        min_label="novice",
        max_label="expert",
    )
    assert response.status_code == 302
    response = edit(
        alice_client,
        study,
        "role",
        name="role",
        label="Your role",
        kind="choice",
        choices="GP\nnurse",
        other="on",
    )
    assert response.status_code == 302
    study.refresh_from_db()
    assert study.questionnaire[1:] == [
        {"name": "role", "label": "Your role", "kind": "choice", "choices": ["GP", "nurse"], "other": True},
        {
            "name": "skill",
            "label": "Your searching skill",
            "kind": "scale",
            "min": 1,
            "max": 7,
            "min_label": "novice",
            "max_label": "expert",
        },
    ]


def test_items_move_and_pages_break(alice_client, study):
    with_items(study)
    url = URL.format(study.slug)
    alice_client.post(url, {"action": "up", "which": "questionnaire", "name": "skill"})
    alice_client.post(url, {"action": "page_break", "which": "questionnaire", "name": "skill"})
    study.refresh_from_db()
    assert [i["name"] for i in study.questionnaire] == ["age", "skill", "role"]
    assert study.questionnaire[1].get("new_page") is True
    # The break moves with its item; an edit keeps it.
    alice_client.post(url, {"action": "down", "which": "questionnaire", "name": "skill"})
    edit(alice_client, study, "skill", name="skill", label="Skill?", kind="scale", min="1", max="5")
    study.refresh_from_db()
    assert [i["name"] for i in study.questionnaire] == ["age", "role", "skill"]
    assert study.questionnaire[2]["new_page"] is True and study.questionnaire[2]["label"] == "Skill?"
    page = alice_client.get(url).content.decode()
    assert "Join the page before" in page
    alice_client.post(url, {"action": "join_page", "which": "questionnaire", "name": "skill"})
    study.refresh_from_db()
    assert "new_page" not in study.questionnaire[2]
    # The first item cannot move up, nor start a page: refused with a message, nothing changed.
    refused = alice_client.post(url, {"action": "up", "which": "questionnaire", "name": "age"}, follow=True)
    assert "already first" in refused.content.decode()
    study.refresh_from_db()
    assert [i["name"] for i in study.questionnaire] == ["age", "role", "skill"]


def test_bad_edits_are_refused_at_their_field_and_change_nothing(alice_client, study):
    with_items(study)
    duplicate = edit(alice_client, study, "skill", name="age", label="Skill", kind="scale", min="1", max="5")
    assert duplicate.status_code == 400
    assert (
        "another question of this questionnaire is named age"
        in duplicate.context["item_form"].errors["name"][0]
    )
    empty = edit(alice_client, study, "role", name="role", label="Role", kind="choice", choices="\n \n")
    assert empty.status_code == 400 and "choices" in empty.context["item_form"].errors
    flat = edit(alice_client, study, "skill", name="skill", label="Skill", kind="scale", min="3", max="3")
    assert flat.status_code == 400 and "must be above min" in flat.context["item_form"].errors["max"][0]
    anchors = edit(alice_client, study, "age", name="age", label="Age", kind="integer", min_label="young")
    assert anchors.status_code == 400 and "min_label" in anchors.context["item_form"].errors
    study.refresh_from_db()
    assert study.questionnaire == ITEMS


def test_both_add_forms_propose_the_questionnaire_before_the_first_task(alice_client, study):
    page = alice_client.get(URL.format(study.slug))
    assert page.context["item_form"]["which"].value() == "questionnaire"
    assert page.context["instrument_form"]["which"].value() == "questionnaire"
    assert page.context["instrument_form"]["instrument"].value() == "demographics"
    for key in ("demographics", "topic_familiarity", "prior_knowledge", "nasa_tlx", "sus"):
        assert f'value="{key}"' in page.content.decode()


def test_the_preview_is_the_participant_s_page_and_stores_nothing(alice_client, study):
    with_items(study)
    alice_client.post(
        URL.format(study.slug), {"action": "page_break", "which": "questionnaire", "name": "skill"}
    )
    preview = f"/studies/{study.slug}/setup/questionnaires/questionnaire/preview/"
    first = alice_client.get(preview).content.decode()
    assert "Page 1 of 2" in first and "Your role" in first and "Skill" not in first
    refused = alice_client.post(preview, {"page": "1", "age": "12", "role": "GP"})
    assert refused.status_code == 400 and "Please give a number from 16 to 99." in refused.content.decode()
    second = alice_client.post(preview, {"page": "1", "age": "40", "role": "GP"}).content.decode()
    assert "Page 2 of 2" in second and '<input type="hidden" name="age" value="40">' in second
    last = alice_client.post(preview, {"page": "2", "age": "40", "role": "GP", "skill": "4"})
    assert last.status_code == 200 and last.context["saved"] == {"age": 40, "role": "GP", "skill": 4}
    assert not Participant.objects.filter(study=study).exists() and not Event.objects.exists()
    assert alice_client.get(f"/studies/{study.slug}/setup/questionnaires/nothing/preview/").status_code == 404
