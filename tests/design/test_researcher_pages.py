"""A researcher creates a study, its scenarios and systems, enrols participants and sees the balance."""

import pytest
from django.urls import reverse

from studies.models import Study

pytestmark = pytest.mark.django_db


def test_it_creates_a_study_with_the_default_grade_scale(client, alice):
    client.force_login(alice)
    response = client.post(
        reverse("new_study:study_create"),
        {
            "name": "Clinical search",
            "grade_labels": "not\nmarginally\nfairly\nhighly",
            "consent_version": "2",
        },
    )
    study = Study.objects.get(name="Clinical search")
    assert response.status_code == 302 and response.url == reverse("studies:study_detail", args=[study.slug])
    assert [(g.value, g.label) for g in study.grade_levels.all()] == [
        (0, "not"),
        (1, "marginally"),
        (2, "fairly"),
        (3, "highly"),
    ]
    assert study.owner == alice and alice in study.researchers.all()


def test_it_builds_the_design_and_enrols_from_the_study_page(client, alice, study):
    client.force_login(alice)
    for n in range(1, 5):
        client.post(
            reverse("studies:scenario_add", args=[study.slug]),
            {
                "scenario-code": f"S{n}",
                "scenario-title": f"T{n}",
                "scenario-text": "Read me",
                "scenario-topic_id": str(n),
            },
        )
    for code in "AB":
        client.post(
            reverse("studies:system_add", args=[study.slug]),
            {"system-code": code, "system-name": code, "system-backend": "builtin", "system-config": "{}"},
        )
    response = client.post(reverse("studies:participants_enrol", args=[study.slug]), {"enrol-count": "30"})
    assert response.status_code == 302
    assert study.participants.count() == 30
    page = client.get(reverse("studies:study_detail", args=[study.slug]))
    html = page.content.decode()
    assert page.status_code == 200
    assert "P030" in html and "15 / 0 / 0" in html
    assert "1. S" in html  # each participant's order is listed


def test_a_duplicate_scenario_code_is_reported_not_a_server_error(client, alice, designed_study):
    client.force_login(alice)
    response = client.post(
        reverse("studies:scenario_add", args=[designed_study.slug]),
        {"scenario-code": "S1", "scenario-title": "again", "scenario-text": "x", "scenario-topic_id": "99"},
        follow=True,
    )
    assert "already used" in response.content.decode()
    assert designed_study.scenarios.count() == 4


def test_a_researcher_without_access_gets_404(client, charlie, study):
    client.force_login(charlie)
    assert client.get(reverse("studies:study_detail", args=[study.slug])).status_code == 404
    assert (
        client.post(
            reverse("studies:participants_enrol", args=[study.slug]), {"enrol-count": "3"}
        ).status_code
        == 404
    )
    assert study.participants.count() == 0


def test_a_co_researcher_sees_the_study(client, bob, study):
    client.force_login(bob)
    assert client.get(reverse("studies:study_detail", args=[study.slug])).status_code == 200


def test_anonymous_visitors_are_sent_to_log_in(client, study):
    response = client.get(reverse("studies:study_detail", args=[study.slug]))
    assert response.status_code == 302 and reverse("login") in response.url


def test_the_study_page_takes_a_fixed_number_of_queries(
    client, alice, designed_study, django_assert_max_num_queries
):
    from studies.design import services

    services.participants_enrol(study=designed_study, count=30)
    client.force_login(alice)
    with django_assert_max_num_queries(
        17
    ):  # 15, and the status box's two counts (studies/design/lifecycle.py)
        assert client.get(reverse("studies:study_detail", args=[designed_study.slug])).status_code == 200


def test_home_sends_researchers_to_studies_and_others_to_log_in(client, alice):
    assert client.get("/").url == reverse("login")
    client.force_login(alice)
    assert client.get("/").url == reverse("studies:study_list")


def test_the_study_page_links_to_its_dashboards_and_assessment(client, alice, study):
    client.force_login(alice)
    html = client.get(reverse("studies:study_detail", args=[study.slug])).content.decode()
    assert reverse("scoring:runs", args=[study.slug]) in html
    assert reverse("assessment:manage", args=[study.slug]) in html
