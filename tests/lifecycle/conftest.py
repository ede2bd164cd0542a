"""Fixtures for the life-cycle and preview tests: a designed study over a tiny collection."""

import pytest

from studies.models import Collection, Document


@pytest.fixture
def collection(db):
    collection = Collection.objects.create(name="tiny")
    Document.objects.bulk_create(
        Document(collection=collection, external_id=f"d{n}", title=f"Title {n}", text=f"Text {n}")
        for n in range(1, 9)
    )
    return collection


@pytest.fixture(autouse=True, scope="session")
def _tasks_registered():
    # sessionlab.queueing.task_named looks tasks up by name: register them as a worker does at start, so this
    # folder also runs on its own (alone, nothing else has imported the apps' tasks.py).
    from sessionlab.celery import app

    app.loader.import_default_modules()
