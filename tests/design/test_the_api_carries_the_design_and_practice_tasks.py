"""The API shows the study's design (read-only: chosen on the set-up page) and takes a scenario's practice
flag, under the same design-lock rule as every other path."""

import pytest

from studies.design import services
from tests.interchange.api_helpers import client_for

pytestmark = pytest.mark.django_db


def test_a_scenario_added_through_the_api_can_be_practice(alice, designed_study):
    client = client_for(alice)
    response = client.post(
        f"/api/studies/{designed_study.pk}/scenarios/",
        {"code": "WARM", "title": "Warm-up", "text": "t", "topic_id": "0", "practice": True},
        format="json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["practice"] is True
    assert designed_study.scenarios.get(code="WARM").practice


def test_the_design_is_shown_and_not_written_by_the_study_endpoint(alice, designed_study):
    services.study_design_set(study=designed_study, design="between")
    client = client_for(alice)
    url = f"/api/studies/{designed_study.pk}/"
    assert client.get(url).json()["design"] == "between"
    response = client.patch(url, {"design": "within", "description": "d"}, format="json")
    assert response.status_code == 200
    designed_study.refresh_from_db()
    assert (designed_study.design, designed_study.description) == ("between", "d")


def test_after_enrolment_marking_a_scenario_practice_is_a_409(alice, designed_study):
    services.participants_enrol(study=designed_study, count=1)
    scenario = designed_study.scenarios.first()
    response = client_for(alice).patch(
        f"/api/studies/{designed_study.pk}/scenarios/{scenario.pk}/", {"practice": True}, format="json"
    )
    assert response.status_code == 409
    scenario.refresh_from_db()
    assert not scenario.practice
