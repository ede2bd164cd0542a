"""The set-up's design page: the researcher chooses within- or between-subjects and sees the first block's
orders; scenarios are marked practice on their own forms; after the first enrolment the design is fixed."""

import pytest

from studies.design import services

pytestmark = pytest.mark.django_db


def test_the_design_page_saves_the_choice_and_shows_the_orders(alice_client, designed_study):
    url = f"/studies/{designed_study.slug}/setup/design/"
    response = alice_client.post(url, {"design": "between"}, follow=True)
    assert response.status_code == 200
    designed_study.refresh_from_db()
    assert designed_study.design == "between"
    page = response.content.decode()
    assert "Design saved." in page
    assert "Between-subjects: each participant works the 4 scenarios on one system" in page
    assert page.count("on A</span>") == 4 * 4 and page.count("on B</span>") == 4 * 4  # 8 rows of 4
    checklist = alice_client.get(f"/studies/{designed_study.slug}/setup/")
    steps = {step.key: step for step in checklist.context["steps"]}
    assert "Between-subjects" in steps["design"].summary


def test_a_bad_choice_is_named_and_changes_nothing(alice_client, designed_study):
    response = alice_client.post(f"/studies/{designed_study.slug}/setup/design/", {"design": "crossover"})
    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()
    designed_study.refresh_from_db()
    assert designed_study.design is None


def test_after_the_first_enrolment_the_design_is_refused_on_the_page(alice_client, designed_study):
    services.participants_enrol(study=designed_study, count=1)
    response = alice_client.post(f"/studies/{designed_study.slug}/setup/design/", {"design": "between"})
    page = response.content.decode()
    assert 'id="design-locked"' in page and 'id="design-form"' not in page
    designed_study.refresh_from_db()
    assert designed_study.design is None


def test_a_scenario_is_marked_practice_on_its_forms(alice_client, designed_study):
    response = alice_client.post(
        f"/studies/{designed_study.slug}/setup/scenarios/",
        {
            "action": "write",
            "scenario-code": "WARM",
            "scenario-title": "Warm-up",
            "scenario-text": "Try the search.",
            "scenario-topic_id": "0",
            "scenario-practice": "on",
        },
        follow=True,
    )
    assert "practice, not scored" in response.content.decode()
    warm = designed_study.scenarios.get(code="WARM")
    assert warm.practice
    alice_client.post(
        f"/studies/{designed_study.slug}/setup/scenarios/{warm.pk}/",
        {
            "scenario-code": "WARM",
            "scenario-title": "Warm-up",
            "scenario-text": "t",
            "scenario-topic_id": "0",
        },
    )
    warm.refresh_from_db()
    assert not warm.practice
