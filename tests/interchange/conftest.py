"""Fixtures for the interchange tests: a small study with two participants who searched and judged."""

import pytest

from studies.models import Collection, Document
from tests.factories import study_with_sessions


@pytest.fixture
def session_track_2012(shared_data):
    return shared_data / "peer-data" / "trec-session-2012"


@pytest.fixture
def collection(db):
    collection = Collection.objects.create(name="tiny")
    Document.objects.bulk_create(
        Document(
            collection=collection,
            external_id=f"d{n}",
            title=f"Title {n}",
            text=f"Text {n}",
            extra={"url": f"http://example.org/{n}"},
        )
        for n in range(1, 9)
    )
    return collection


@pytest.fixture
def worked_study(designed_study, collection):
    """Alice's designed study with 2 enrolled participants; P001 has worked its first two assignments
    (tests/factories.py, study_with_sessions)."""
    return study_with_sessions(designed_study, collection)


@pytest.fixture
def archive(worked_study, tmp_path):
    """The worked study exported as a JSON archive file (export_study), for the import tests to alter."""
    from django.core.management import call_command

    path = tmp_path / "study.json"
    call_command("export_study", worked_study.slug, "-o", str(path))
    return path
