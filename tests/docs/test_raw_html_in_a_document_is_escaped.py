"""Raw HTML in a document is shown as text, never passed through: the page runs no script it did not ship
(the CSP forbids inline script too, docs/security.md), and a javascript: link is not a link."""


def test_a_script_tag_and_a_javascript_link_are_inert(client, docs_dir):
    (docs_dir / "hostile.md").write_text(
        '# Hostile\n\n<script>alert(1)</script>\n\nText <img src=x onerror="alert(2)"> and'
        " [click](javascript:alert(3)).\n"
    )
    page = client.get("/docs/hostile/").content.decode()
    assert "<script>alert(1)" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img src=x" not in page and "&lt;img src=x" in page
    assert 'href="javascript:' not in page
