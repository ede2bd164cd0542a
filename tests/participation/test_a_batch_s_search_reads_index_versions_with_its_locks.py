"""A batch's search checks this node's index copy against the database's current number without a statement
of its own: the number comes with the sessions' lock, so a version bumped elsewhere is seen by the next batch
(retry later until this node rebuilds), and the copy's stamp file is read once per change, not per search."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from studies.models import Query
from studies.participation.way.steps import events_ingest
from studies.search import index_versions
from studies.search.engines import search as engine
from studies.search.systems import collection_index_build
from tests.factories import study_enrolled

from .conftest import cid, start


@pytest.fixture
def built(designed_study, small_collection, settings, tmp_path):
    settings.INDEX_ROOT = tmp_path / "node"
    study = study_enrolled(designed_study, 1, collection=small_collection)
    for configuration in ("bm25_title_text", "bm25_text"):
        collection_index_build(collection=small_collection, configuration=configuration)
    participant = study.participants.get()
    return participant, start(participant)


def _query(participant, session, text="wing"):
    return events_ingest(
        participant=participant,
        events=[{"id": cid(), "type": "query", "session": session.pk, "data": {"text": text}}],
    )[0]


def test_a_search_in_a_batch_runs_no_statement_of_its_own_for_the_index_version(built):
    participant, session = built
    assert _query(participant, session)["ok"]
    with CaptureQueriesContext(connection) as seen:
        assert _query(participant, session, "flow")["ok"]
    version_reads = [q["sql"] for q in seen.captured_queries if "studies_indexversion" in q["sql"]]
    assert len(version_reads) == 1  # the sessions' lock, which reads them with the sessions
    assert "studies_searchsession" in version_reads[0]


def test_a_version_bumped_elsewhere_is_seen_by_the_next_batch(built):
    participant, session = built
    assert _query(participant, session)["ok"]
    system = session.assignment.system
    configuration = system.config["configuration"]
    index_versions.index_version_bump(
        collection_id=participant.study.collection_id, configuration=configuration
    )
    ack = _query(participant, session, "flow")
    assert ack["ok"] is False and "send it again later" in ack["retry_later"]
    assert Query.objects.filter(session=session).count() == 1
    index_versions.index_build_here(
        collection_id=participant.study.collection_id, configuration=configuration
    )
    assert _query(participant, session, "flow")["ok"]


def test_the_copy_s_stamp_is_read_once_per_change_of_its_file(built, monkeypatch):
    participant, session = built
    assert _query(participant, session)["ok"]
    reads = []
    real = index_versions.read_index_meta
    monkeypatch.setattr(index_versions, "read_index_meta", lambda d: reads.append(d) or real(d))
    for text in ("flow", "wing", "heat"):
        assert _query(participant, session, text)["ok"]
    assert reads == []
    configuration = session.assignment.system.config["configuration"]
    index_versions.index_build_here(
        collection_id=participant.study.collection_id, configuration=configuration
    )
    index_versions.index_version_bump(
        collection_id=participant.study.collection_id, configuration=configuration
    )
    index_versions.index_build_here(
        collection_id=participant.study.collection_id, configuration=configuration
    )
    assert _query(participant, session, "flow")["ok"]
    assert len(reads) >= 1 and engine.read_index_meta(reads[0])["version"] == 2
