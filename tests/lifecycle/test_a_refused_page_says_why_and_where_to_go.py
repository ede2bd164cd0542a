"""An assessor who opens a researcher's page (`/studies/`) gets a page in the app's layout saying why and
where their own work is, not a bare "403 Forbidden"."""

import pytest


@pytest.mark.django_db
def test_an_assessor_on_the_studies_page_is_told_why_and_where_to_go(client, django_user_model):
    assessor = django_user_model.objects.create_user("ann", password="ann-password")
    client.force_login(assessor)
    page = client.get("/studies/")
    assert page.status_code == 403
    text = page.content.decode()
    assert "Researcher pages are for researcher accounts." in text
    assert 'href="/assess/' in text and "SessionLab" in text and "ann" in text
