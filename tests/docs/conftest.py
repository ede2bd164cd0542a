import pytest

from sessionlab import docs_views


@pytest.fixture
def docs_dir(tmp_path, monkeypatch):
    """A docs/ of our own: write `<name>.md` files into it; its img/ holds one picture."""
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (tmp_path / "secret.txt").write_text("not a document")
    monkeypatch.setattr(docs_views, "DOCS", tmp_path)
    monkeypatch.setattr(docs_views, "IMAGES", tmp_path / "img")
    docs_views._rendered.cache_clear()
    yield tmp_path
    docs_views._rendered.cache_clear()
