from studies.questionnaires.instruments import INSTRUMENTS, sus_score
from studies.questionnaires.items import questionnaire_errors


def post(client, study, **data):
    return client.post(f"/studies/{study.slug}/setup/questionnaires/", data)


def test_every_shipped_instrument_is_a_valid_questionnaire():
    for instrument in INSTRUMENTS.values():
        assert questionnaire_errors(list(instrument.items)) == [], instrument.key
    assert len(INSTRUMENTS["nasa_tlx"].items) == 6 and len(INSTRUMENTS["sus"].items) == 10


def test_nasa_tlx_is_added_after_each_task(alice_client, study):
    page = alice_client.get(f"/studies/{study.slug}/setup/questionnaires/").content.decode()
    assert "participants answer the default" in page
    response = post(
        alice_client,
        study,
        **{
            "action": "instrument",
            "instrument-which": "post_task_questionnaire",
            "instrument-instrument": "nasa_tlx",
        },
    )
    assert response.status_code == 302
    study.refresh_from_db()
    assert [item["name"] for item in study.post_task_questionnaire] == [
        "tlx_mental",
        "tlx_physical",
        "tlx_temporal",
        "tlx_performance",
        "tlx_effort",
        "tlx_frustration",
    ]
    response = post(
        alice_client,
        study,
        **{
            "action": "instrument",
            "instrument-which": "post_task_questionnaire",
            "instrument-instrument": "nasa_tlx",
        },
    )
    assert response.status_code == 400 and "already part of this questionnaire" in response.content.decode()


def test_a_question_is_built_from_its_type(alice_client, study):
    base = {"action": "item", "item-which": "questionnaire", "item-required": "on"}
    post(
        alice_client,
        study,
        **base,
        **{
            "item-name": "role",
            "item-label": "Your role",
            "item-kind": "choice",
            "item-choices": "GP\nnurse\n",
        },
    )
    post(
        alice_client,
        study,
        **base,
        **{
            "item-name": "skill",
            "item-label": "Skill",
            "item-kind": "scale",
            "item-min": "1",
            "item-max": "7",
        },
    )
    post(
        alice_client,
        study,
        **{
            "action": "item",
            "item-which": "questionnaire",
            "item-name": "notes",
            "item-label": "Anything else?",
            "item-kind": "text",
        },
    )
    study.refresh_from_db()
    assert study.questionnaire == [
        {"name": "role", "label": "Your role", "kind": "choice", "choices": ["GP", "nurse"]},
        {"name": "skill", "label": "Skill", "kind": "scale", "min": 1, "max": 7},
        {"name": "notes", "label": "Anything else?", "kind": "text", "required": False},
    ]
    post(alice_client, study, action="remove", which="questionnaire", name="skill")
    study.refresh_from_db()
    assert [item["name"] for item in study.questionnaire] == ["role", "notes"]


def test_a_malformed_question_is_refused_next_to_its_field(alice_client, study):
    response = post(
        alice_client,
        study,
        **{
            "action": "item",
            "item-which": "questionnaire",
            "item-name": "1bad",
            "item-label": "x",
            "item-kind": "scale",
            "item-min": "5",
            "item-max": "1",
        },
    )
    assert response.status_code == 400
    errors = response.context["item_form"].errors
    assert "name" in errors
    response = post(
        alice_client,
        study,
        **{
            "action": "item",
            "item-which": "questionnaire",
            "item-name": "s",
            "item-label": "x",
            "item-kind": "scale",
        },
    )
    assert "a scale needs min and max" in response.content.decode()
    study.refresh_from_db()
    assert study.questionnaire == []


def test_the_sus_score_follows_brooke():
    assert sus_score({f"sus_{n}": (5 if n % 2 else 1) for n in range(1, 11)}) == 100.0
    assert sus_score({f"sus_{n}": 3 for n in range(1, 11)}) == 50.0
    assert sus_score({"sus_1": 5}) is None


def test_simulated_participants_answer_the_study_s_own_questionnaires():
    import random

    from studies.questionnaires.instruments import NASA_TLX
    from studies.simulation.participants import answers_to

    items = [
        *NASA_TLX.items,
        {"name": "role", "label": "Role", "kind": "choice", "choices": ["GP", "nurse"]},
        {"name": "notes", "label": "Notes", "kind": "text", "required": False},
    ]
    answers = answers_to(items, random.Random(1))
    assert all(0 <= answers[f"tlx_{n}"] <= 20 for n in ("mental", "effort", "frustration"))
    assert answers["role"] in ("GP", "nurse") and "notes" not in answers
