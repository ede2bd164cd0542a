"""A Markdown table is an HTML table on the served page, not a block of pipes; inside the app's layout."""

import re


def test_a_table_renders_as_a_table_with_its_header(client, docs_dir):
    (docs_dir / "guide.md").write_text("# Guide\n\n| option | default |\n| --- | --- |\n| `depth` | 10 |\n")
    page = client.get("/docs/guide/").content.decode()
    assert re.search(r"<table>\s*<thead>\s*<tr>\s*<th>option</th>", page)
    assert "<td><code>depth</code></td>" in page
    assert "| --- |" not in page
    assert '<header class="top"' in page  # base.html's header: the app's layout


def test_the_shipped_docs_render_their_tables(client):
    page = client.get("/docs/planning/").content.decode()
    assert page.count("<table>") >= 3
