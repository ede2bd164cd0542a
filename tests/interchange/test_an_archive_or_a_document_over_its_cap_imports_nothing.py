"""An archive's sizes are capped (a 60 MB document imported, with 543 MB of memory): a file over
ARCHIVE_MAX_BYTES is refused by its size before it is read, and a document over ARCHIVE_MAX_DOCUMENT_BYTES
(one string, or its title, text and extra together) is refused naming its line or its id, nothing imported."""

import json
import tracemalloc

import pytest
from django.test import override_settings

from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive_import
from studies.models import Collection, Document, Study

pytestmark = pytest.mark.django_db


def _counts():
    return Study.objects.count(), Collection.objects.count(), Document.objects.count()


def _with_document(archive, text: str, *, title: str = "") -> None:
    data = json.loads(archive.read_text())
    data["documents"].append(
        {"external_id": "huge", "collection": "another", "title": title, "text": text, "extra": {}}
    )
    archive.write_text(json.dumps(data, indent=1), encoding="utf-8")


def test_an_archive_over_the_cap_is_refused_before_it_is_read(archive, alice):
    before = _counts()
    size = archive.stat().st_size
    with override_settings(ARCHIVE_MAX_BYTES=size - 1), pytest.raises(ImportFailure) as caught:
        study_archive_import(path=archive, owner=alice)
    assert f"over ARCHIVE_MAX_BYTES ({size - 1} bytes): it has {size} bytes" in str(caught.value)
    assert caught.value.path == str(archive)
    assert _counts() == before


def test_a_string_over_the_document_cap_is_refused_at_its_line(archive, alice):
    _with_document(archive, "x" * 5000)
    line = next(n for n, text in enumerate(archive.read_text().splitlines(), 1) if "x" * 5000 in text)
    before = _counts()
    with override_settings(ARCHIVE_MAX_DOCUMENT_BYTES=4096), pytest.raises(ImportFailure) as caught:
        study_archive_import(path=archive, owner=alice)
    assert caught.value.line == line and "over ARCHIVE_MAX_DOCUMENT_BYTES (4096 bytes)" in str(caught.value)
    assert _counts() == before


def test_a_document_over_the_cap_in_all_is_refused_by_its_id(archive, alice):
    # Each string under 4096 bytes (the text's escapes \u00e9 are 9000 characters in the file), 4500 in all.
    _with_document(archive, "é" * 1500, title="t" * 1500)
    before = _counts()
    with override_settings(ARCHIVE_MAX_DOCUMENT_BYTES=4096), pytest.raises(ImportFailure) as caught:
        study_archive_import(path=archive, owner=alice)
    assert "document 'huge' has 4502 bytes, over ARCHIVE_MAX_DOCUMENT_BYTES (4096)" in str(caught.value)
    assert caught.value.field.startswith("$.documents[")
    assert _counts() == before


def test_a_60_mb_document_is_refused_by_default_without_the_memory_it_took(archive, alice):
    _with_document(archive, "word " * (12 * 1024 * 1024))  # 60 MiB of text, under ARCHIVE_MAX_BYTES
    before = _counts()
    tracemalloc.start()
    try:
        with pytest.raises(ImportFailure, match="ARCHIVE_MAX_DOCUMENT_BYTES"):
            study_archive_import(path=archive, owner=alice)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # It was 543 MB before the cap, and about 250 MiB with it before the import was streamed.
    assert peak < 40 * 1024 * 1024, f"peak {peak / 2**20:.0f} MiB"
    assert _counts() == before
