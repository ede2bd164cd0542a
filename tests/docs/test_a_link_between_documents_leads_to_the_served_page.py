"""A link to another document goes to its served page and section; a link to a repository file that has no
page here (docs/deploy/compose.yaml) is shown as its text; links outside the site stay as they are."""


def test_links_are_rewritten_to_served_pages(client, docs_dir):
    (docs_dir / "security.md").write_text("# Security\n\n## Roles\n")
    (docs_dir / "guide.md").write_text(
        "# Guide\n\nSee [roles](security.md#roles), [below](#setup), [the compose file](deploy/compose.yaml),"
        " [the README](../README.md), [missing](nowhere.md) and [tantivy](https://example.org/t)."
        "\n\n## Setup\n"
    )
    page = client.get("/docs/guide/").content.decode()
    assert '<a href="/docs/security/#roles">roles</a>' in page
    assert '<a href="#setup">below</a>' in page
    assert '<h2 id="setup">Setup</h2>' in page
    assert '<a href="https://example.org/t">tantivy</a>' in page
    for text, target in (
        ("the compose file", "compose.yaml"),
        ("the README", "README.md"),
        ("missing", "nowhere.md"),
    ):
        assert text in page and target not in page


def test_every_link_of_the_shipped_docs_to_a_document_resolves(client):
    import re

    from sessionlab.docs_views import doc_names

    for name in doc_names():
        page = client.get(f"/docs/{name}/").content.decode()
        assert ".md" not in "".join(re.findall(r'href="([^"]*)"', page)), name
        for target, section in re.findall(r'href="(/docs/[a-z0-9-]+/)(?:#([a-z0-9-]+))?"', page):
            linked = client.get(target)
            assert linked.status_code == 200, (name, target)
            assert not section or f'id="{section}"' in linked.content.decode(), (name, target, section)
