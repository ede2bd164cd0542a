"""A study imported from an archive that brings no reference versions (one of a study made on the
New-study form before the fix) is built on its collection as any study is: the collection's judgments become
its first version. An archive that brings versions keeps exactly those."""

import json

import pytest

from studies.assessment.references import reference_version_import_qrels
from studies.design import services
from studies.interchange.archive import study_archive, study_archive_import
from tests.setup.test_a_study_attaches_a_collection_from_its_page import with_topics

pytestmark = pytest.mark.django_db


def imported(study, tmp_path, owner):
    path = tmp_path / "study.json"
    path.write_text(json.dumps(study_archive(study=study), default=str))
    return study_archive_import(path=path, owner=owner)


def test_an_archive_with_no_version_gets_the_collection_s_judgments(alice, tmp_path):
    study = services.study_create(owner=alice, name="Made on the form", collection=with_topics(alice))
    copy = imported(study, tmp_path, alice)
    assert copy.collection == study.collection
    version = copy.reference_versions.get()
    assert version.number == 1 and version.judgments.count() == 2
    assert version.facts == {"collection": "Docs", "collection_judgments": 2}


def test_an_archive_with_versions_keeps_them_alone(alice, tmp_path):
    study = services.study_create(owner=alice, name="Assessed", collection=with_topics(alice))
    reference_version_import_qrels(study=study, lines=["1 0 d1 1"], path="x.qrels", created_by=alice)
    copy = imported(study, tmp_path, alice)
    assert [v.judgments.count() for v in copy.reference_versions.order_by("number")] == [1]
