"""Only the study's researchers see its runs and charts; another researcher gets 404, not 403."""

import pytest
from django.urls import reverse

from scoring.dashboards.registry import CHARTS

pytestmark = pytest.mark.django_db


def _urls(run):
    slug = run.study.slug
    urls = [
        reverse("scoring:runs", args=[slug]),
        reverse("scoring:compare", args=[slug]),
        reverse("scoring:run_detail", args=[slug, run.pk]),
        reverse("scoring:run_status", args=[slug, run.pk]),
    ]
    for name in CHARTS:
        urls += [
            reverse("scoring:chart_json", args=[slug, run.pk, name]),
            reverse("scoring:chart_csv", args=[slug, run.pk, name]),
        ]
    return urls


def test_a_researcher_without_access_gets_404_everywhere(client, charlie, scored):
    _, run = scored
    client.force_login(charlie)
    for url in _urls(run):
        assert client.get(url).status_code == 404, url
    assert client.post(reverse("scoring:run_make_default", args=[run.study.slug, run.pk])).status_code == 404
    assert (
        client.post(reverse("scoring:runs", args=[run.study.slug]), {"weights": "0,1,10,100"}).status_code
        == 404
    )


def test_a_co_researcher_sees_everything(client, bob, scored):
    _, run = scored
    client.force_login(bob)
    for url in _urls(run):
        assert client.get(url).status_code == 200, url


def test_a_run_of_another_study_is_not_found_under_this_one(client, alice, scored, django_user_model):
    from studies.design import services as study_services

    _, run = scored
    other = study_services.study_create(owner=alice, name="Another study")
    client.force_login(alice)
    assert client.get(reverse("scoring:run_detail", args=[other.slug, run.pk])).status_code == 404


def test_visitors_are_sent_to_log_in_and_participants_refused(client, scored, django_user_model):
    _, run = scored
    response = client.get(reverse("scoring:run_detail", args=[run.study.slug, run.pk]))
    assert response.status_code == 302 and "login" in response.url
    client.force_login(django_user_model.objects.create_user("assessor", password="x"))
    assert client.get(reverse("scoring:run_detail", args=[run.study.slug, run.pk])).status_code == 403
