"""Fixtures of the set-up tests: where uploads and indexes go, and zips made on the fly."""

import io
import zipfile

import pytest


@pytest.fixture(autouse=True)
def _own_folders(settings, tmp_path):
    settings.INDEX_ROOT = tmp_path / "indexes"
    settings.COLLECTION_UPLOAD_ROOT = tmp_path / "uploads"


def make_zip(members: dict[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, content in members.items():
            zipped.writestr(name, content.encode() if isinstance(content, str) else content)
    return buffer.getvalue()


@pytest.fixture
def cranfield_zip(cranfield_folder) -> bytes:
    folder = cranfield_folder
    return make_zip(
        {
            f"cranfield/{name}": (folder / name).read_bytes()
            for name in ("cran.all.1400", "cran.qry", "cranqrel")
        }
    )


@pytest.fixture
def alice_client(client, alice):
    client.force_login(alice)
    return client
