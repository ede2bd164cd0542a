"""Who reaches which assessment page: assessors only their studies, researchers only studies they can see,
participants (token links, no account) none."""

import pytest
from django.urls import reverse

from studies.assessment import pools
from studies.design import services

from .conftest import record_session


@pytest.fixture
def other_study(django_user_model):
    dora = django_user_model.objects.create_user("dora", password="dora-password", is_staff=True)
    study = services.study_create(owner=dora, name="Dora's study")
    services.scenario_add(study=study, code="S1", title="Other", text="Other text", topic_id="1")
    return study


@pytest.fixture
def ann(sessions_study, make_assessors):
    pools.pool_build(study=sessions_study, rule="relevant")
    (user,) = make_assessors(sessions_study, "ann")
    return user


def researcher_urls(slug):
    names = [
        "manage",
        "pool_build",
        "pool_refresh",
        "pool_add",
        "pool_import",
        "plan_set",
        "assessor_invite",
        "agreement",
        "disagreements",
        "adjudicate",
        "decide",
        "publish",
        "version_import",
    ]
    return [reverse(f"assessment:{name}", args=[slug]) for name in names] + [
        reverse("assessment:version_qrels", args=[slug, 1])
    ]


def assessor_urls(slug):
    return [
        reverse("assessment:assessor_study", args=[slug]),
        reverse("assessment:assessor_form", args=[slug, "S1"]),
    ]


def test_an_assessor_of_one_study_gets_404_on_another(client, ann, sessions_study, other_study):
    client.force_login(ann)
    for url in assessor_urls(sessions_study.slug):
        assert client.get(url).status_code == 200, url
    for url in assessor_urls(other_study.slug):
        assert client.get(url).status_code == 404, url
    for url in assessor_urls("no-such-study"):
        assert client.get(url).status_code == 404, url


def test_an_assessor_sees_only_their_studies_on_their_home_page(client, ann, other_study, sessions_study):
    client.force_login(ann)
    page = client.get(reverse("assessment:home")).content.decode()
    assert sessions_study.name.replace("'", "&#x27;") in page
    assert "Dora" not in page


def test_an_assessor_cannot_reach_researcher_pages(client, ann, sessions_study):
    client.force_login(ann)
    for url in researcher_urls(sessions_study.slug):
        assert client.get(url).status_code == 403, url
        assert client.post(url).status_code == 403, url


def test_a_researcher_without_access_gets_404(client, charlie, sessions_study):
    client.force_login(charlie)
    for url in researcher_urls(sessions_study.slug):
        assert client.get(url).status_code == 404, url
        assert client.post(url).status_code == 404, url


def test_a_co_researcher_reaches_the_researcher_pages(client, bob, sessions_study):
    client.force_login(bob)
    assert client.get(reverse("assessment:manage", args=[sessions_study.slug])).status_code == 200


def test_a_researcher_is_not_an_assessor_of_their_own_study(client, alice, ann, sessions_study):
    client.force_login(alice)
    for url in assessor_urls(sessions_study.slug):
        assert client.get(url).status_code == 404, url


def test_a_participant_reaches_no_assessment_page(client, ann, sessions_study):
    participant = sessions_study.participants.get(code="P001")
    client.get(f"/p/{participant.access_token}/")  # whatever the participant pages do, they hold no account
    urls = (
        [reverse("assessment:home")]
        + assessor_urls(sessions_study.slug)
        + researcher_urls(sessions_study.slug)
    )
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith(reverse("login")), url
        assert client.post(url, {"pool_document": 1, "grade": 3}).status_code == 302, url
    assert not ann.assessor_judgments.exists()


def test_anyone_not_logged_in_is_sent_to_log_in(client, sessions_study):
    response = client.get(reverse("assessment:assessor_form", args=[sessions_study.slug, "S1"]))
    assert response.status_code == 302 and response.url.startswith(reverse("login"))


def test_an_assessor_cannot_post_a_grade_for_a_document_not_allocated_to_them(client, ann, sessions_study):
    p1 = sessions_study.participants.get(code="P001")
    record_session(p1, "S2", [{1: "d9"}], {"d9": 2})
    s1 = sessions_study.scenarios.get(code="S1")
    pools.pool_build(study=sessions_study)
    s2_pool_document = sessions_study.scenarios.get(code="S2").assessment_pool.documents.get()
    client.force_login(ann)
    url = reverse("assessment:assessor_form", args=[sessions_study.slug, s1.code])
    assert client.post(url, {"pool_document": s2_pool_document.id, "grade": 1}).status_code == 404
    assert not ann.assessor_judgments.exists()
