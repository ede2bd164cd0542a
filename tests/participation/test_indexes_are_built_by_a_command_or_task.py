"""Indexes: one folder per (collection, configuration) under INDEX_ROOT, built by a command or a task."""

import pytest
from django.core.management import CommandError, call_command

from studies.search.engines.search import read_index_meta
from studies.search.systems import collection_index_dir, collection_index_status, system_search
from studies.tasks import collection_index_build_task


@pytest.fixture
def study_with_collection(designed_study, small_collection, index_root):
    designed_study.collection = small_collection
    designed_study.save(update_fields=["collection"])
    return designed_study


def test_build_index_builds_every_configuration_of_a_collection(small_collection, index_root):
    call_command("build_index", str(small_collection.pk))
    assert collection_index_status(collection=small_collection) == {"bm25_title_text": 40, "bm25_text": 40}
    folder = collection_index_dir(collection=small_collection, configuration="bm25_text")
    assert folder.parent.parent == index_root
    assert read_index_meta(folder)["config"] == "bm25_text"


def test_build_index_for_a_study_builds_what_its_systems_use(study_with_collection):
    call_command("build_index", study=study_with_collection.slug)
    system = study_with_collection.systems.get(code="A")
    page = system_search(system=system, query="wing", page=1)
    assert page.total == 25 and len(page.results) == 10 and page.error is None


def test_the_task_builds_an_index_and_returns_the_document_count(small_collection, index_root):
    # apply() runs the task body here whatever the broker (test_real_worker.py queues it on a real worker).
    result = collection_index_build_task.apply(args=(small_collection.pk, "bm25_title_text"))
    assert result.get(timeout=10) == 40
    assert collection_index_status(collection=small_collection)["bm25_title_text"] == 40


def test_build_index_refuses_an_unknown_collection(db, index_root):
    with pytest.raises(CommandError, match="no collection"):
        call_command("build_index", "999")


def test_a_search_on_a_missing_index_answers_unavailable_and_logs_it(study_with_collection, caplog):
    system = study_with_collection.systems.get(code="B")
    page = system_search(system=system, query="wing", page=1)
    assert (
        page.results == []
        and page.unavailable
        and page.error.startswith("The search system is not available")
    )
    assert "missing on this node" in caplog.text
    # and the search did not build it while the caller waited (INDEX_BUILD_ON_MISS is off in the tests)
    assert collection_index_status(collection=study_with_collection.collection)["bm25_text"] is None
