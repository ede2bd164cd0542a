"""The study's downloads page links the package; the link gives the same members as export_package, to the
study's researchers only."""

import io
import zipfile

import pytest
from django.urls import reverse

from scoring.lib import package_layout as layout

pytestmark = pytest.mark.django_db


def test_the_downloads_page_links_the_package_and_it_downloads(client, alice, scored_study):
    client.force_login(alice)
    url = reverse("scoring:package", args=[scored_study.slug])
    page = client.get(reverse("exports:downloads", args=[scored_study.slug]))
    assert page.status_code == 200 and url in page.content.decode()
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert f'filename="{scored_study.slug}-package.zip"' in response["Content-Disposition"]
    names = zipfile.ZipFile(io.BytesIO(response.content)).namelist()
    assert {layout.DESCRIPTION, layout.CRATE, layout.CODEBOOK, layout.ARCHIVE} <= set(names)
    assert sum(name.startswith("data/") for name in names) == len(layout.TABLES)


def test_someone_else_gets_no_package(client, django_user_model, scored_study):
    client.force_login(django_user_model.objects.create_user("charlie", password="x"))
    response = client.get(reverse("scoring:package", args=[scored_study.slug]))
    assert response.status_code in (403, 404)
