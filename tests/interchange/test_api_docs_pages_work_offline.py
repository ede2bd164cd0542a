"""Swagger UI and ReDoc load their scripts from this server, not a CDN: Swagger UI from the sidecar's static
files, ReDoc from /api/redoc/redoc.standalone.js (the sidecar's script without its CDN logo,
sessionlab/api_docs.py)."""

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("url", ["/api/docs/", "/api/redoc/"])
def test_the_api_documentation_pages_reference_only_local_assets(client, alice, url):
    client.force_login(alice)
    response = client.get(url)
    html = response.content.decode()
    assert response.status_code == 200
    assert "cdn." not in html and "unpkg" not in html and "jsdelivr" not in html
    local = "/static/drf_spectacular_sidecar/" if url == "/api/docs/" else "/api/redoc/redoc.standalone.js"
    assert local in html
