"""Every page links the site's icon (static/favicon.svg, from base.html and the API documentation pages),
and /favicon.ico, which browsers ask for anyway, answers with it instead of a 404."""

import pytest

from studies.design import services

pytestmark = pytest.mark.django_db

ICON = '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'


@pytest.fixture
def participant(designed_study):
    return services.participants_enrol(study=designed_study, count=1)[0]


def test_the_researcher_participant_and_public_pages_link_the_icon(
    client, alice, designed_study, participant
):
    public = ["/accounts/login/", "/docs/", "/docs/study-life-cycle/", f"/p/{participant.access_token}/"]
    for url in public:
        response = client.get(url)
        assert response.status_code == 200 and ICON in response.content.decode(), url
    client.force_login(alice)
    for url in ["/studies/", f"/studies/{designed_study.slug}/", "/api/redoc/"]:
        response = client.get(url)
        assert response.status_code == 200 and ICON in response.content.decode(), url


def test_favicon_ico_answers_with_the_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 302 and response.url == "/static/favicon.svg"
    icon = client.get(response.url)
    assert icon.status_code == 200 and icon["Content-Type"] == "image/svg+xml"
    assert b"<svg" in b"".join(icon.streaming_content if icon.streaming else [icon.content])
    assert client.post("/favicon.ico").status_code == 405
