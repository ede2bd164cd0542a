"""Pages that cite the documentation link to the served page (/docs/<name>/, at the section), rather than
naming a repository file (docs/<name>.md) a researcher cannot open from the browser."""

import re
from pathlib import Path

import pytest
from django.conf import settings

pytestmark = pytest.mark.django_db

TEMPLATES = Path(settings.BASE_DIR) / "templates"
COMMENTS = re.compile(r"{#.*?#}|{% comment %}.*?{% endcomment %}", re.S)


def test_no_template_shows_a_docs_file_path_as_text():
    cited = {
        str(path.relative_to(TEMPLATES)): found
        for path in TEMPLATES.rglob("*.html")
        if (found := re.findall(r"docs/[a-z0-9-]+\.md", COMMENTS.sub("", path.read_text())))
    }
    assert cited == {}


def test_each_page_s_doc_links_lead_to_a_served_section(client, alice, designed_study):
    client.force_login(alice)
    slug = designed_study.slug
    pages = [
        f"/studies/{slug}/",
        f"/studies/{slug}/recruitment/reconciliation/",
        f"/assess/manage/{slug}/agreement/",
        f"/scoring/{slug}/planning/",
    ]
    links = set()
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        found = set(re.findall(r'href="(/docs/[a-z0-9-]+/(?:#[a-z0-9-]+)?)"', response.content.decode()))
        assert found, f"{url} links no documentation"
        links |= found
    assert len(links) >= 5
    for link in links:
        path, _, section = link.partition("#")
        page = client.get(path)
        assert page.status_code == 200, link
        assert not section or f'id="{section}"' in page.content.decode(), link
