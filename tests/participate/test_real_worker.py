"""A real Celery worker (started by .ci/run against PostgreSQL and Redis) builds an index that this process can
search. Skipped on a plain checkout; in CI a broker without a worker is a failure, not a skip."""

import os
import shutil

import pytest

from studies.engines.search import Searcher
from studies.models import Collection, Document
from studies.search_systems import collection_index_dir
from studies.tasks import collection_index_build_task

from .conftest import make_documents

pytestmark = [pytest.mark.needs_worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def real_worker():
    broker = os.environ.get("CELERY_BROKER_URL", "")
    running = os.environ.get("SESSIONLAB_WORKER_RUNNING") == "1"
    if broker and running:
        return
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"} and broker:
        pytest.fail("CELERY_BROKER_URL is set but SESSIONLAB_WORKER_RUNNING is not 1: CI must start a worker")
    pytest.skip("needs a real Celery worker: set CELERY_BROKER_URL and SESSIONLAB_WORKER_RUNNING=1 (.ci/run does)")


def test_a_real_worker_builds_an_index_the_test_process_can_search(real_worker):
    collection = Collection.objects.create(name="Worker test collection")
    Document.objects.bulk_create(Document(collection=collection, external_id=i, title=t, text=x)
                                 for i, t, x in make_documents())
    # The worker uses the default settings.INDEX_ROOT, so this test does too (no tmp override).
    folder = collection_index_dir(collection=collection, configuration="bm25_title_text")
    try:
        result = collection_index_build_task.delay(collection.pk, "bm25_title_text")
        assert result.get(timeout=60) == 40
        page = Searcher(folder, "bm25_title_text").search("wing")
        assert page.total == 25 and len(page.results) == 10
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)
