"""A real Celery worker (started by .ci/run against PostgreSQL and Redis) builds an index that this process
can search. Skipped on a plain checkout; in CI a broker without a worker is a failure, not a skip."""

import shutil

import pytest

from studies.models import Collection, Document
from studies.search.engines.search import Searcher
from studies.search.systems import collection_index_dir
from studies.tasks import collection_index_build_task

from .conftest import make_documents

pytestmark = [pytest.mark.needs_worker, pytest.mark.django_db(transaction=True)]


def test_a_real_worker_builds_an_index_the_test_process_can_search(real_worker):
    collection = Collection.objects.create(name="Worker test collection")
    Document.objects.bulk_create(
        Document(collection=collection, external_id=i, title=t, text=x) for i, t, x in make_documents()
    )
    # The worker uses the default settings.INDEX_ROOT, so this test does too (no tmp override).
    folder = collection_index_dir(collection=collection, configuration="bm25_title_text")
    try:
        result = collection_index_build_task.delay(collection.pk, "bm25_title_text")
        assert result.get(timeout=60) == 40
        page = Searcher(folder, "bm25_title_text").search("wing")
        assert page.total == 25 and len(page.results) == 10
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)
