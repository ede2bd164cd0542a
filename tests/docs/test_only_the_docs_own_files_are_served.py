"""Only docs/*.md by name and docs/img/*.png by name are served: an unknown name is a 404, and no path is
taken from the URL (traversal, other extensions, encoded slashes)."""

import pytest


def test_an_unknown_document_is_a_404(client, docs_dir):
    assert client.get("/docs/no-such-doc/").status_code == 404


@pytest.mark.parametrize(
    "url",
    [
        "/docs/..%2Fsettings/",
        "/docs/../sessionlab/settings/",
        "/docs/img/..%2Fsecret.txt",
        "/docs/img/../secret.txt",
        "/docs/img/secret.txt",
        "/docs/img/%2Fetc%2Fpasswd",
        "/docs/img/missing.png",
    ],
)
def test_a_path_outside_is_refused(client, docs_dir, url):
    assert client.get(url).status_code == 404


def test_an_image_of_the_docs_is_served_and_its_page_points_to_it(client, docs_dir):
    (docs_dir / "guide.md").write_text("# Guide\n\n![The upload](img/shot.png)\n\n![Elsewhere](../x.png)\n")
    page = client.get("/docs/guide/").content.decode()
    assert '<img src="/docs/img/shot.png" alt="The upload"' in page
    assert "x.png" not in page and "Elsewhere" in page
    image = client.get("/docs/img/shot.png")
    assert image.status_code == 200 and image["Content-Type"] == "image/png"
    assert b"".join(image.streaming_content).startswith(b"\x89PNG")
