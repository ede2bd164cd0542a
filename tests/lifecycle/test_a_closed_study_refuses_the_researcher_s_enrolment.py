"""A closed (or paused) study enrols nobody, from the researcher's page or the API as from the public link:
the service refuses with a reason that says so, the page shows it, the API answers 409 with it."""

import pytest

from studies.design import lifecycle, services
from studies.errors import DesignError
from tests.interchange.api_helpers import client_for

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "status, reason",
    [
        ("closed", "the study is closed: a closed study enrols no new participants"),
        ("paused", "the study is paused: no new participants are enrolled until it is open again"),
    ],
)
def test_the_service_refuses_with_a_design_error(designed_study, alice, status, reason):
    lifecycle.study_status_change(study=designed_study, status=status, by=alice)
    with pytest.raises(DesignError, match=reason):
        services.participants_enrol(study=designed_study, count=2)
    assert not designed_study.participants.exists()


@pytest.mark.parametrize("status", ["closed", "paused"])
def test_the_api_answers_409_with_the_reason(designed_study, alice, status):
    lifecycle.study_status_change(study=designed_study, status=status, by=alice)
    response = client_for(alice).post(
        f"/api/studies/{designed_study.pk}/participants/enrol/", {"count": 2}, format="json"
    )
    assert response.status_code == 409, response.content
    assert f"the study is {status}" in response.json()["detail"]
    assert not designed_study.participants.exists()


def test_the_page_says_why(client, designed_study, alice):
    lifecycle.study_status_change(study=designed_study, status="closed", by=alice)
    client.force_login(alice)
    response = client.post(
        f"/studies/{designed_study.slug}/participants/enrol/", {"enrol-count": "2"}, follow=True
    )
    assert response.status_code == 200
    assert "the study is closed: a closed study enrols no new participants" in response.content.decode()
    assert not designed_study.participants.exists()
