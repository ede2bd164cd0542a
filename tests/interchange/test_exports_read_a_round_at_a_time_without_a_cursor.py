"""The exports and the index builds read a round of rows per query (sessionlab/rounds.py), so that memory
holds one round even where `.iterator()` cannot stream: behind PgBouncer in transaction mode
(DB_DISABLE_SERVER_SIDE_CURSORS=1) PostgreSQL sends an iterator's whole result at once. Only the primary
keys are read whole; each round is one query, with the queryset's order and its select_related."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sessionlab.rounds import in_rounds, pk_rounds, values_by_pk
from studies.models import Document, SearchSession

pytestmark = pytest.mark.django_db


def _sessions():
    return SearchSession.objects.select_related("assignment__participant", "assignment__scenario").order_by(
        "-assignment__participant__enrolment_index", "assignment__position"
    )


ROWS = SearchSession.objects.select_related("assignment__participant", "assignment__scenario")


def test_rounds_keep_the_order_and_read_a_query_per_round(worked_study):
    expected = list(_sessions())
    assert len(expected) >= 2
    with CaptureQueriesContext(connection) as queries:
        rounds = list(in_rounds(_sessions(), ROWS, 1))
        labels = [
            (s.assignment.participant.enrolment_index, s.assignment.scenario.topic_id) for [s] in rounds
        ]
    assert [s.pk for [s] in rounds] == [s.pk for s in expected]
    assert labels == [
        (s.assignment.participant.enrolment_index, s.assignment.scenario.topic_id) for s in expected
    ]
    assert len(queries) == 1 + len(expected)  # the keys, then one query per round; select_related kept


def test_a_round_holds_at_most_its_size():
    assert [len(r) for r in pk_rounds(Document.objects.none(), 3)] == []


def test_the_documents_are_read_in_keyset_pages(collection):
    expected = list(collection.documents.order_by("pk").values_list("external_id", "title"))
    assert len(expected) == 8
    for size in (1, 3, 4, 8, 9):
        with CaptureQueriesContext(connection) as queries:
            rows = list(values_by_pk(collection.documents.all(), ("external_id", "title"), size))
        assert rows == expected, size
        assert len(queries) == len(expected) // size + 1, size  # the last page is short (or empty)
        assert all("LIMIT" in q["sql"] for q in queries.captured_queries)


def test_a_row_deleted_between_the_reads_is_left_out(worked_study):
    sessions = _sessions()
    rounds = in_rounds(sessions, ROWS, 100)
    first = sessions.first()
    pk_list = next(pk_rounds(sessions, 100))
    SearchSession.objects.filter(pk=first.pk).delete()
    assert first.pk in pk_list
    assert first.pk not in [s.pk for s in next(rounds)]
