"""The index names each document by its first `# ` heading (a heading inside a code block does not count)."""


def test_the_index_shows_titles(client, docs_dir):
    (docs_dir / "guide.md").write_text("```\n# not this\n```\n\n# Setting up a study\n\n## Later\n")
    (docs_dir / "bare.md").write_text("No heading at all.\n")
    page = client.get("/docs/").content.decode()
    assert '<a href="/docs/guide/">Setting up a study</a>' in page
    assert '<a href="/docs/bare/">bare</a>' in page
    assert (
        client.get("/docs/guide/").content.decode().count("<title>Setting up a study · SessionLab docs") == 1
    )
