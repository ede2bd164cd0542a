from studies.models import Collection, CollectionTopic


def topics_for(study):
    collection = Collection.objects.create(name="c", owner=study.owner)
    for n in (1, 2, 3):
        CollectionTopic.objects.create(
            collection=collection,
            topic_id=str(n),
            title=f"Topic {n}",
            description=f"Find documents about {n}.",
            narrative=f"Relevant: {n}.",
        )
    study.collection = collection
    study.save(update_fields=["collection"])
    return collection


def test_chosen_topics_become_scenarios_with_their_text(alice_client, study):
    topics_for(study)
    page = alice_client.get(f"/studies/{study.slug}/setup/scenarios/").content.decode()
    assert "1: Topic 1" in page
    response = alice_client.post(
        f"/studies/{study.slug}/setup/scenarios/", {"action": "topics", "pick-topics": ["1", "3"]}
    )
    assert response.status_code == 302
    assert list(study.scenarios.values_list("code", "title", "text", "topic_id")) == [
        ("T1", "Topic 1", "Find documents about 1.\n\nRelevant: 1.", "1"),
        ("T3", "Topic 3", "Find documents about 3.\n\nRelevant: 3.", "3"),
    ]
    # Used topics are no longer offered.
    page = alice_client.get(f"/studies/{study.slug}/setup/scenarios/").content.decode()
    assert 'value="1"' not in page and 'value="2"' in page


def test_a_topic_scenario_is_edited_before_the_first_enrolment(alice_client, study):
    topics_for(study)
    alice_client.post(f"/studies/{study.slug}/setup/scenarios/", {"action": "topics", "pick-topics": ["2"]})
    scenario = study.scenarios.get()
    alice_client.post(
        f"/studies/{study.slug}/setup/scenarios/{scenario.pk}/",
        {
            "scenario-code": "T2",
            "scenario-title": "Edited",
            "scenario-text": "Your own words.",
            "scenario-topic_id": "2",
        },
    )
    scenario.refresh_from_db()
    assert (scenario.title, scenario.text) == ("Edited", "Your own words.")


def test_a_scenario_is_written_and_a_taken_code_is_refused_next_to_the_form(alice_client, study):
    data = {
        "action": "write",
        "scenario-code": "S1",
        "scenario-title": "One",
        "scenario-text": "Read me",
        "scenario-topic_id": "9",
    }
    assert alice_client.post(f"/studies/{study.slug}/setup/scenarios/", data).status_code == 302
    response = alice_client.post(
        f"/studies/{study.slug}/setup/scenarios/", {**data, "scenario-topic_id": "8"}
    )
    assert response.status_code == 400 and "already has a scenario with code" in response.content.decode()
    assert study.scenarios.count() == 1


def test_an_unknown_topic_is_refused(alice_client, study):
    topics_for(study)
    response = alice_client.post(
        f"/studies/{study.slug}/setup/scenarios/", {"action": "topics", "pick-topics": ["99"]}
    )
    assert response.status_code == 400 and not study.scenarios.exists()
