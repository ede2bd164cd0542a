"""A zip whose members cannot all be unpacked (a file and a folder of one name, a 300-character name, a name
twice, an absolute path, `..`, a symbolic link, an encrypted member, too many members, too much once unpacked)
failed as "an unexpected error" with a traceback, or overwrote a member silently. Each is now the upload's
error naming the zip, the member and the problem, with nothing left on disk and no rows."""

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from studies.library import services
from studies.models import Collection, CollectionUpload, Document

pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name")  # the zip twice, on purpose
GOOD = "\n".join(json.dumps({"id": f"d{n}", "title": f"Title {n}", "text": f"wing {n}"}) for n in range(1, 4))


def raw_zip(members: list[tuple[zipfile.ZipInfo | str, str]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        for info, content in members:
            zipped.writestr(info, content)
    return buffer.getvalue()


def _link(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = 0o120777 << 16
    return info


def encrypted_zip() -> bytes:
    """A zip whose one member says it is encrypted (zipfile writes none: the flag is set in its headers)."""
    data = bytearray(raw_zip([("secret.jsonl", GOOD)]))
    data[6] |= 0x1  # the local header's general purpose flag
    central = data.index(b"PK\x01\x02")
    data[central + 8] |= 0x1  # the central directory's
    return bytes(data)


LONG = "d" * 294 + ".jsonl"  # 300 characters
CASES = [
    (
        [("a", GOOD), ("a/b.jsonl", GOOD)],
        "member 'a' is a file, and 'a/b.jsonl' puts a folder of the same name",
    ),
    ([("x/a/b.jsonl", GOOD), ("x/a", GOOD)], "member 'x/a' is a file, and 'x/a/b.jsonl' puts a folder"),
    ([(LONG, GOOD)], "has a name longer than the 255 bytes a file's name may have"),
    ([("é" * 200 + ".jsonl", GOOD)], "has a name longer than the 255 bytes"),  # 406 bytes in UTF-8
    ([("/".join(["p" * 200] * 6) + "/a.jsonl", GOOD)], "has a path longer than 1024 bytes"),
    ([("a.jsonl", GOOD), ("a.jsonl", GOOD)], "member 'a.jsonl' is in the zip twice"),  # zipfile warns
    ([("a.jsonl", GOOD), ("./a.jsonl", GOOD)], "member './a.jsonl' is in the zip twice"),
    ([("/abs.jsonl", GOOD)], "member '/abs.jsonl' would be written outside the upload's folder"),
    ([("a/../../b.jsonl", GOOD)], "would be written outside the upload's folder"),
    ([("C:/b.jsonl", GOOD)], "would be written outside the upload's folder"),
    ([("ok.jsonl", GOOD), (_link("link.jsonl"), "/etc/passwd")], "member 'link.jsonl' is a symbolic link"),
]


def _upload(client, captured, content: bytes):
    with captured(execute=True):
        client.post(
            "/collections/upload/",
            {"name": "Mine", "format": "jsonl", "documents": SimpleUploadedFile("docs.zip", content)},
        )
    return CollectionUpload.objects.get()


@pytest.fixture
def uploads(settings, tmp_path):
    settings.COLLECTION_UPLOAD_ROOT = tmp_path / "uploads"
    return settings.COLLECTION_UPLOAD_ROOT


def _nothing_left(uploads):
    assert not Collection.objects.exists() and not Document.objects.exists()
    assert not any(path.is_file() for path in uploads.rglob("*")), list(uploads.rglob("*"))


@pytest.mark.django_db
@pytest.mark.parametrize("members, words", CASES, ids=[str(n) for n in range(len(CASES))])
def test_each_member_problem_is_named(
    alice_client, django_capture_on_commit_callbacks, uploads, members, words
):
    row = _upload(alice_client, django_capture_on_commit_callbacks, raw_zip(members))
    assert row.status == "failed"
    assert row.error.startswith("docs.zip: member "), row.error
    assert words in row.error, row.error
    assert "unexpected" not in row.error
    _nothing_left(uploads)


@pytest.mark.django_db
def test_an_encrypted_member_is_named(alice_client, django_capture_on_commit_callbacks, uploads):
    row = _upload(alice_client, django_capture_on_commit_callbacks, encrypted_zip())
    assert row.error == "docs.zip: member 'secret.jsonl' is encrypted"
    _nothing_left(uploads)


@pytest.mark.django_db
def test_too_many_members_and_too_many_bytes_are_named(
    alice_client, django_capture_on_commit_callbacks, uploads, monkeypatch
):
    monkeypatch.setattr(services, "MAX_ZIP_MEMBERS", 3)
    row = _upload(
        alice_client, django_capture_on_commit_callbacks, raw_zip([(f"{n}.jsonl", GOOD) for n in range(4)])
    )
    assert row.error == "docs.zip: 4 files, more than the 3 a zip may hold"
    _nothing_left(uploads)


@pytest.mark.django_db
def test_a_write_the_checks_did_not_foresee_is_named_and_undone(
    alice_client, django_capture_on_commit_callbacks, uploads, monkeypatch
):
    real = services._member_write
    calls = []

    def second_fails(zipped, member, path, label):
        calls.append(member.filename)
        if len(calls) == 2:
            raise services.CollectionImportError(
                f"{label}: member {member.filename!r} cannot be written (No space)"
            )
        real(zipped, member, path, label)

    monkeypatch.setattr(services, "_member_write", second_fails)
    row = _upload(
        alice_client, django_capture_on_commit_callbacks, raw_zip([("a.jsonl", GOOD), ("b.jsonl", GOOD)])
    )
    assert row.error == "docs.zip: member 'b.jsonl' cannot be written (No space)"
    _nothing_left(uploads)


def test_an_os_error_while_writing_names_the_member(tmp_path):
    archive = tmp_path / "docs.zip"
    archive.write_bytes(raw_zip([("a.jsonl", GOOD)]))
    (tmp_path / "out").write_text("a file where the folder goes")
    with pytest.raises(services.CollectionImportError, match=r"docs.zip: member 'a.jsonl' cannot be written"):
        services._unzip(archive, tmp_path / "out")


def test_an_uploaded_name_in_another_script_fits_the_disk():
    assert len(services._safe_name("中" * 150 + ".jsonl").encode()) <= 200


def test_a_good_zip_still_unpacks(tmp_path):
    archive = tmp_path / "docs.zip"
    archive.write_bytes(raw_zip([("a.jsonl", GOOD), ("sub/b.jsonl", GOOD), ("sub/", "")]))
    files = services._unzip(archive, tmp_path / "out")
    assert [p.relative_to(tmp_path / "out").as_posix() for p in files] == ["a.jsonl", "sub/b.jsonl"]
