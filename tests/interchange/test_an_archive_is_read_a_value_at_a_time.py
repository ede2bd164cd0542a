"""An archive import is streamed (a 60 MB document imported with 543 MB of memory): the file is read
in chunks into a temporary file, refused as soon as it passes ARCHIVE_MAX_BYTES, and parsed a value at a time,
so memory follows the largest item, not the archive. Whatever its keys' order, it imports the same; a broken
list between its items is refused by line, nothing imported."""

import builtins
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


class _Recorded:
    """A file whose reads are recorded (size asked, bytes given)."""

    def __init__(self, file, reads):
        self._file, self._reads = file, reads

    def read(self, size=-1):
        data = self._file.read(size)
        self._reads.append((size, len(data)))
        return data

    def __getattr__(self, name):
        return getattr(self._file, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._file.close()


@pytest.fixture
def reads_of(monkeypatch):
    """The reads made of files opened at one path (the archive), by size asked and given."""
    reads: dict[str, list] = {}
    real_open = builtins.open

    def recording_open(file, *args, **kwargs):
        opened = real_open(file, *args, **kwargs)
        if str(file) in reads:
            return _Recorded(opened, reads[str(file)])
        return opened

    monkeypatch.setattr(builtins, "open", recording_open)
    return reads


def _with_documents(archive, count: int, size: int) -> int:
    data = json.loads(archive.read_text())
    data["documents"] += [
        {"external_id": f"big{n}", "collection": "tiny", "title": f"Big {n}", "text": "word " * (size // 5)}
        for n in range(count)
    ]
    archive.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return archive.stat().st_size


def test_the_archive_is_never_read_whole(archive, alice, reads_of):
    size = _with_documents(archive, 30, 100_000)
    reads = reads_of.setdefault(str(archive), [])
    copy = study_archive_import(path=archive, owner=alice, name="Copy")
    assert copy.collection.documents.filter(external_id__startswith="big").count() == 30
    assert sum(given for _asked, given in reads) == size  # all of it read, by this file object
    assert max(asked for asked, _given in reads) <= 1024 * 1024, reads  # in chunks, never whole


def test_an_endless_source_is_refused_as_soon_as_it_passes_the_cap(alice, reads_of):
    # A device, not a regular file: its size on disk says nothing, so the cap holds while it is read.
    reads = reads_of.setdefault("/dev/zero", [])
    before = _counts()
    with override_settings(ARCHIVE_MAX_BYTES=4 * 1024 * 1024), pytest.raises(ImportFailure) as caught:
        study_archive_import(path="/dev/zero", owner=alice)
    assert caught.value.reason == f"the archive is over ARCHIVE_MAX_BYTES ({4 * 1024 * 1024} bytes)"
    assert caught.value.path == "/dev/zero"
    given = sum(given for _asked, given in reads)
    assert 4 * 1024 * 1024 < given <= 4 * 1024 * 1024 + 64 * 1024  # stopped within a chunk of the cap
    assert max(asked for asked, _given in reads) <= 64 * 1024, reads  # never asked for the cap at once
    assert _counts() == before


def test_memory_follows_the_largest_item_not_the_archive(archive, alice):
    size = _with_documents(archive, 120, 100_000)  # 12 MB of documents of 100 kB each
    tracemalloc.start()
    try:
        copy = study_archive_import(path=archive, owner=alice, name="Copy")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert copy.collection.documents.filter(external_id__startswith="big").count() == 120
    # Parsed whole, the archive took several times its size (100 MiB: the read buffer of the cap alone);
    # streamed, a batch of documents with its SQL and one item (5.8 MiB measured on PostgreSQL).
    assert peak < 0.6 * size, f"peak {peak / 2**20:.1f} MiB for an archive of {size / 2**20:.1f} MiB"


def test_a_string_far_over_the_document_cap_is_refused_before_it_is_held(archive, alice):
    _with_documents(archive, 1, 0)
    data = json.loads(archive.read_text())
    data["documents"][-1]["text"] = "word " * (4 * 1024 * 1024)  # 20 MiB
    archive.write_text(json.dumps(data, indent=1), encoding="utf-8")
    line = next(n for n, text in enumerate(archive.read_text().splitlines(), 1) if "word word" in text)
    before = _counts()
    tracemalloc.start()
    try:
        with override_settings(ARCHIVE_MAX_DOCUMENT_BYTES=64 * 1024), pytest.raises(ImportFailure) as caught:
            study_archive_import(path=archive, owner=alice)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.line == line and "over ARCHIVE_MAX_DOCUMENT_BYTES (65536 bytes)" in str(caught.value)
    assert peak < 8 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB"
    assert _counts() == before


def test_the_keys_may_come_in_any_order(archive, alice):
    data = json.loads(archive.read_text())
    archive.write_text(
        json.dumps(data, indent=1, sort_keys=True), encoding="utf-8"
    )  # audit first, version last
    copy = study_archive_import(path=archive, owner=alice, name="Sorted")
    original = Study.objects.exclude(pk=copy.pk).get()
    assert copy.participants.count() == original.participants.count() == 2
    assert sorted(copy.scenarios.values_list("code", flat=True)) == sorted(
        original.scenarios.values_list("code", flat=True)
    )


def test_a_list_broken_between_its_items_is_refused_by_line(archive, alice):
    text = archive.read_text()
    at = text.index('"participants": [')
    second = text.index('\n  {\n   "code"', text.index('"code"', at) + 1)  # the second participant
    comma = text.rindex(",", 0, second)
    broken = text[:comma] + text[comma + 1 :]
    archive.write_text(broken, encoding="utf-8")
    before = _counts()
    with pytest.raises(ImportFailure) as caught:
        study_archive_import(path=archive, owner=alice)
    assert "invalid JSON in $.participants[0]: expected ',' or ']' after the item" in caught.value.reason
    assert caught.value.line == text[:second].count("\n") + 2  # the line of the second one's "{"
    assert _counts() == before


def test_an_unknown_top_level_key_is_skipped_unread(archive, alice):
    data = json.loads(archive.read_text())
    data["later_feature"] = [{"x": "y" * 100}] * 10
    archive.write_text(json.dumps(data, indent=1), encoding="utf-8")
    assert study_archive_import(path=archive, owner=alice, name="Newer").participants.count() == 2
