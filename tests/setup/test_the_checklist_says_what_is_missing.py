from studies.design import services
from studies.models import Collection, Document
from studies.search.systems import collection_index_build


def steps(client, study):
    response = client.get(f"/studies/{study.slug}/setup/")
    assert response.status_code == 200
    return {step.key: step for step in response.context["steps"]}, response


def test_a_new_study_lists_every_missing_step(alice_client, study):
    found, response = steps(alice_client, study)
    assert not response.context["ready"]
    assert found["collection"].missing == ["Choose the collection participants search (or upload one)."]
    assert "Add at least one system" in found["systems"].missing[0]
    assert "Add scenarios" in found["scenarios"].missing[0]
    assert found["grades"].done and found["consent"].done  # the fixture wrote a consent text
    assert not found["questionnaires"].required and not found["time"].required
    assert 'id="setup-not-ready"' in response.content.decode()


def test_a_complete_design_is_ready_and_the_lock_is_explained(alice_client, designed_study):
    study = designed_study
    collection = Collection.objects.create(name="c", owner=study.owner)
    Document.objects.create(collection=collection, external_id="d1", text="wing")
    study.collection = collection
    study.save(update_fields=["collection"])
    found, response = steps(alice_client, study)
    assert "the index bm25_title_text of the collection is not built" in found["systems"].missing[0]
    for configuration in ("bm25_title_text", "bm25_text"):
        collection_index_build(collection=collection, configuration=configuration)
    found, response = steps(alice_client, study)
    assert response.context["ready"], [s.missing for s in found.values()]
    services.participants_enrol(study=study, count=2)
    found, response = steps(alice_client, study)
    assert "Latin square" in found["systems"].locked and "Latin square" in found["scenarios"].locked
    assert "2 participants enrolled" in response.content.decode()


def test_scenarios_that_do_not_share_out_between_systems_are_explained(alice_client, designed_study):
    services.scenario_add(study=designed_study, code="S5", title="Five", text="t", topic_id="5")
    found, _ = steps(alice_client, designed_study)
    assert found["scenarios"].done and found["design"].done
    assert "each system for 2 or 3 of them (at most one apart)" in found["design"].summary
    assert "Every 20 participants are exactly balanced" in found["design"].summary


def test_a_study_whose_scenarios_are_all_practice_is_not_ready(alice_client, designed_study):
    designed_study.scenarios.update(practice=True)
    found, response = steps(alice_client, designed_study)
    assert not found["design"].done
    assert "leave at least one as a scored task" in found["design"].missing[0]
    assert not response.context["ready"]
