"""Swagger UI and ReDoc load their scripts from our own static files, not a CDN."""

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("url", ["/api/docs/", "/api/redoc/"])
def test_the_api_documentation_pages_reference_only_local_assets(client, alice, url):
    client.force_login(alice)
    response = client.get(url)
    html = response.content.decode()
    assert response.status_code == 200
    assert "cdn." not in html and "unpkg" not in html and "jsdelivr" not in html
    assert "/static/drf_spectacular_sidecar/" in html
