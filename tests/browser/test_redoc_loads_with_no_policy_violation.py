"""ReDoc's page (/api/redoc/) renders under the page's own Content-Security-Policy with no violation at all:
its bundle no longer fetches Redocly's logo from their CDN (sessionlab/api_docs.py), and the policy is not
loosened for it (img-src stays 'self' data: blob:). The served bundle names no outside host for an image."""

import gzip

import pytest
from django.urls import reverse

from .csp import csp_listen, csp_violations

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_redoc_page_renders_and_reports_no_violation(chromium, live_server):
    page = chromium.new_page()
    page.set_default_timeout(30_000)
    reports = csp_listen(page)
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    response = page.goto(live_server.url + reverse("api-redoc"))
    assert response.status == 200
    policy = response.headers["content-security-policy"]
    assert "img-src 'self' data: blob:;" in policy and "script-src 'self';" in policy
    page.wait_for_selector("[role=menuitem]")
    page.wait_for_selector("text=API docs by Redocly")  # the footer is drawn, without its image
    page.wait_for_timeout(500)  # late reports
    assert csp_violations(page, reports) == [] and errors == []
    outside = [url for url in requests if url.startswith("http") and not url.startswith(live_server.url)]
    assert outside == []  # (its search worker is a blob: URL of the page's own)
    assert page.locator("img[alt='redocly logo']").count() == 0
    page.close()


def test_the_bundle_is_the_sidecar_s_without_the_cdn_logo(client):
    plain = client.get(reverse("api-redoc-script"))
    assert plain.status_code == 200 and plain["Content-Type"].startswith("text/javascript")
    assert b"cdn.redoc.ly" not in plain.content and b"Redoc" in plain.content
    zipped = client.get(reverse("api-redoc-script"), HTTP_ACCEPT_ENCODING="gzip, br")
    assert zipped["Content-Encoding"] == "gzip" and gzip.decompress(zipped.content) == plain.content
    again = client.get(reverse("api-redoc-script"), HTTP_IF_NONE_MATCH=plain["ETag"])
    assert again.status_code == 304
