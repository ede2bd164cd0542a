"""The event batch's SQL is built by named functions (studies/participation/events/statements.py), each
reading the database's dialect when it is called, not when the module is imported."""

from unittest import mock

from django.db import connections

from studies.participation.events import statements


def _with_vendor(vendor: str):
    return mock.patch.object(type(connections["default"]), "vendor", vendor)


def test_the_dialect_is_read_when_a_statement_is_built():
    with _with_vendor("postgresql"):
        postgres_sql, _ = statements.session_queries(7, 3, set(), {"q-1"})
    with _with_vendor("sqlite"):
        sqlite_sql, _ = statements.session_queries(7, 3, set(), {"q-1"})
    assert "payload -> 'ack' ->> 'query'" in postgres_sql and "json_extract" not in postgres_sql
    assert "json_extract(e.payload, '$.ack.query')" in sqlite_sql


def test_each_statement_has_one_parameter_per_placeholder():
    built = [
        statements.events_stored(1, {"a", "b"}),
        statements.sessions_locked({4, 5}, 1),
        statements.session_documents(4, 2, {"d1", "d2", "d3"}),
        statements.session_queries(4, 1, {1, 2}, {"q-9"}),
        statements.grade_values(3),
        statements.collection_documents(2, set()),
        statements.collection_documents(2, {"x"}),
        statements.scan_mark_update(8, 3),
        *statements.judgment_changes_insert([((4, 10), 2, None), ((4, 11), 0, None)]),
    ]
    for sql, params in built:
        assert sql.count("%s") == len(params), sql
