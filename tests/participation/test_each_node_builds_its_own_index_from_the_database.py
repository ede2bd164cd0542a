"""Search indexes are a cache of the database: two INDEX_ROOT folders stand for two nodes. A node without the
current version answers "retry later" (no query stored) and builds its own copy; a new version makes every
copy stale; two builds on one node wait for each other; the checklist says what the database says."""

import threading

import pytest

from sessionlab import health
from studies.design.checklist import study_checklist
from studies.errors import RetryLater
from studies.models import Event, IndexVersion, Query
from studies.participation.way.steps import events_ingest, query_log
from studies.search import index_versions
from studies.search.engines.search import read_index_meta
from studies.search.systems import collection_index_build, collection_index_dir, system_search
from tests.factories import study_enrolled

from .conftest import cid, start

CONFIGURATIONS = ("bm25_title_text", "bm25_text")


@pytest.fixture
def two_nodes(settings, tmp_path):
    """node(name) makes that node's INDEX_ROOT the current one."""

    def node(name):
        settings.INDEX_ROOT = tmp_path / name
        return settings.INDEX_ROOT

    node("A")
    return node


@pytest.fixture
def built_on_a(designed_study, small_collection, two_nodes):
    study = study_enrolled(designed_study, 2, collection=small_collection)
    for configuration in CONFIGURATIONS:
        assert collection_index_build(collection=small_collection, configuration=configuration) == 40
    return study


def test_a_node_without_the_index_answers_retry_later_stores_nothing_then_builds_its_own(
    built_on_a, two_nodes
):
    participant = built_on_a.participants.order_by("enrolment_index")[0]
    session = start(participant)
    two_nodes("B")
    with pytest.raises(RetryLater, match="send it again later"):
        query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    acks = events_ingest(
        participant=participant,
        events=[{"id": cid(), "type": "query", "session": session.pk, "data": {"text": "wing"}}],
    )
    assert acks[0]["ok"] is False and "send it again later" in acks[0]["retry_later"]
    assert not Query.objects.filter(session=session).exists()
    assert not Event.objects.filter(type="query").exists()

    for configuration in CONFIGURATIONS:  # what the background thread runs
        assert index_versions.index_build_here(
            collection_id=built_on_a.collection_id, configuration=configuration
        )
    ack = query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    assert len(ack["results"]) == 10
    assert Query.objects.filter(session=session).count() == 1


def test_a_new_version_makes_an_old_copy_stale_until_this_node_rebuilds(built_on_a):
    collection = built_on_a.collection
    system = built_on_a.systems.get(code="A")
    assert system_search(system=system, query="wing").total == 25
    configuration = index_versions.index_state(collection_id=collection.pk, configuration="bm25_title_text")
    assert configuration.version == 1 and configuration.here == index_versions.CURRENT

    index_versions.index_version_bump(
        collection_id=collection.pk, configuration="bm25_title_text"
    )  # elsewhere
    state = index_versions.index_state(collection_id=collection.pk, configuration="bm25_title_text")
    assert (state.version, state.documents, state.here) == (2, None, index_versions.STALE)
    page = system_search(system=system, query="wing")
    assert page.unavailable and page.results == [] and "stale" in page.detail

    index_versions.index_build_here(collection_id=collection.pk, configuration="bm25_title_text")
    index_dir = collection_index_dir(collection=collection, configuration="bm25_title_text")
    assert read_index_meta(index_dir)["version"] == 2
    assert system_search(system=system, query="wing").total == 25
    row = IndexVersion.objects.get(collection=collection, configuration="bm25_title_text")
    assert row.documents == 40 and row.built_on


@pytest.mark.django_db(transaction=True)
def test_two_builds_on_one_node_wait_for_each_other_and_build_once(small_collection, two_nodes, monkeypatch):
    real_flock, real_build = index_versions.fcntl.flock, index_versions.build_index
    lock_calls, builds = [], []
    second_waits = threading.Event()

    def flock(fd, operation):
        lock_calls.append(operation)
        if len(lock_calls) == 2:
            second_waits.set()
        return real_flock(fd, operation)

    def build(*args, **kwargs):
        builds.append(args[1])
        assert second_waits.wait(30)  # the other thread is at the lock while this one builds
        return real_build(*args, **kwargs)

    monkeypatch.setattr(index_versions.fcntl, "flock", flock)
    monkeypatch.setattr(index_versions, "build_index", build)
    counts = []

    def run():
        from django.db import connections

        try:
            counts.append(
                index_versions.index_build_here(collection_id=small_collection.pk, configuration="bm25_text")
            )
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counts == [40, 40] and len(builds) == 1


def test_a_miss_starts_one_background_build_per_process(built_on_a, two_nodes, settings, monkeypatch):
    settings.INDEX_BUILD_ON_MISS = True
    release, started = threading.Event(), []

    def build_here(*, collection_id, configuration):
        started.append(configuration)
        assert release.wait(30)
        return 0

    monkeypatch.setattr(index_versions, "index_build_here", build_here)
    two_nodes("B")
    system = built_on_a.systems.get(code="A")
    for _ in range(3):
        assert system_search(system=system, query="wing").unavailable
    running = [t for t in threading.enumerate() if t.name.startswith("index-build-")]
    release.set()
    for thread in running:
        thread.join()
    assert len(running) == 1 and started == ["bm25_title_text"]


def test_the_checklist_tells_the_databases_truth_and_this_nodes_copy(built_on_a, two_nodes):
    two_nodes("B")  # built on A only
    systems = {step.key: step for step in study_checklist(study=built_on_a)}["systems"]
    assert systems.done and systems.missing == []
    assert "not yet copied to this server" in systems.summary

    for configuration in CONFIGURATIONS:  # a new version that no node has built yet
        index_versions.index_version_bump(collection_id=built_on_a.collection_id, configuration=configuration)
    systems = {step.key: step for step in study_checklist(study=built_on_a)}["systems"]
    assert not systems.done and "not built yet on any server" in systems.missing[0]


def test_build_index_local_brings_this_node_up_to_date_without_a_new_version(built_on_a, two_nodes):
    from django.core.management import call_command

    two_nodes("B")
    call_command("build_index", study=built_on_a.slug, local=True)
    state = index_versions.index_state(
        collection_id=built_on_a.collection_id, configuration="bm25_title_text"
    )
    assert (state.version, state.here) == (1, index_versions.CURRENT)
    two_nodes("A")  # node A's copy is still current: no new version was made
    state = index_versions.index_state(
        collection_id=built_on_a.collection_id, configuration="bm25_title_text"
    )
    assert state.here == index_versions.CURRENT


def test_a_failed_background_build_is_not_started_again_by_every_search(settings, monkeypatch, caplog):
    settings.INDEX_BUILD_ON_MISS = True
    attempts = []

    def broken(*, collection_id, configuration):
        attempts.append(configuration)
        raise ValueError("duplicate document id '7'")

    monkeypatch.setattr(index_versions, "index_build_here", broken)
    monkeypatch.setattr(index_versions, "_failed_at", {})
    assert index_versions.index_build_soon(collection_id=999, configuration="bm25_text")
    for thread in [t for t in threading.enumerate() if t.name.startswith("index-build-")]:
        thread.join()
    assert not index_versions.index_build_soon(collection_id=999, configuration="bm25_text")
    assert attempts == ["bm25_text"] and "duplicate document id" in caplog.text
    monkeypatch.setattr(index_versions, "RETRY_FAILED_BUILD_AFTER", 0.0)  # its time has passed
    assert index_versions.index_build_soon(collection_id=999, configuration="bm25_text")
    for thread in [t for t in threading.enumerate() if t.name.startswith("index-build-")]:
        thread.join()
    assert attempts == ["bm25_text", "bm25_text"]


def test_readiness_tells_which_current_versions_this_node_holds(built_on_a, two_nodes):
    check = health.CHECKS["search_indexes"]  # registered by studies (studies/apps.py)
    assert check() == {"index_root": "present", "current": 2, "stale": 0, "missing": 0}
    two_nodes("B")
    assert check() == {"index_root": "missing", "current": 0, "stale": 0, "missing": 2}
