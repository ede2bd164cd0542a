"""An assessor (an account that is not staff) who opens a researcher's page gets the app's refusal page with a
way on to their own work, never a bare "403 Forbidden", on each list page a researcher starts from."""

import pytest

pytestmark = pytest.mark.django_db

RESEARCHER_PAGES = ["/studies/", "/collections/", "/studies/new/"]


@pytest.mark.parametrize("url", RESEARCHER_PAGES)
def test_an_assessor_is_refused_with_a_way_to_the_assessment_page(client, django_user_model, url):
    assessor = django_user_model.objects.create_user("dora", password="dora-password")
    client.force_login(assessor)
    response = client.get(url, follow=True)
    assert response.status_code == 403, (url, response.status_code)
    page = response.content.decode()
    assert 'id="forbidden-reason"' in page and "/assess/" in page, page[:500]
    assert "You are signed in as <strong>dora</strong>" in page
