"""An archive's document whose id the collection cannot hold (over Document.external_id's 200 characters,
or empty) is refused by the one writer of documents (studies.library.collections), naming its place in the
archive; nothing is imported (PostgreSQL refused the whole batch naming no document; SQLite stored it)."""

import json

import pytest

from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive_import
from studies.models import Collection, Document, Study

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("external_id", "reason"), [("x" * 201, "longer than 200"), ("", "needs an id")])
def test_an_archive_document_with_an_id_the_column_cannot_hold_imports_nothing(
    archive, alice, external_id, reason
):
    data = json.loads(archive.read_text())
    data["documents"].append(
        {"external_id": external_id, "collection": "another", "title": "t", "text": "x", "extra": {}}
    )
    archive.write_text(json.dumps(data, indent=1), encoding="utf-8")
    before = Study.objects.count(), Collection.objects.count(), Document.objects.count()
    with pytest.raises(ImportFailure) as caught:
        study_archive_import(path=archive, owner=alice)
    assert caught.value.field == f"$.documents[{len(data['documents']) - 1}]"
    assert reason in str(caught.value)
    assert (Study.objects.count(), Collection.objects.count(), Document.objects.count()) == before
