"""The Django internals sessionlab/plain_sql.py relies on, one test each, so that a Django upgrade that
changes one fails here by name rather than somewhere in the events endpoint."""

import inspect

import pytest
from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper

from sessionlab import plain_sql
from studies.models import Assignment, Participant, Study

pytestmark = pytest.mark.django_db


def test_a_connection_wraps_a_raw_cursor_with_prepare_cursor():
    assert list(inspect.signature(BaseDatabaseWrapper._prepare_cursor).parameters) == ["self", "cursor"]
    connection.ensure_connection()
    wrapped = connection._prepare_cursor(connection.connection.cursor())
    wrapped.execute("SELECT 1")
    assert wrapped.fetchone() == (1,)


def test_the_connection_wrapper_takes_an_attribute_of_ours():
    connection._plain_sql_cursors_probe = []
    try:
        assert connection._plain_sql_cursors_probe == []
    finally:
        del connection._plain_sql_cursors_probe


def test_fields_cache_says_whether_a_relation_is_loaded(designed_study, django_assert_num_queries):
    participant = Participant.objects.create(study=designed_study, code="P1", enrolment_index=0)
    fresh = Participant.objects.get(pk=participant.pk)
    assert not plain_sql.is_loaded(fresh, "study")
    fresh.study = Study.objects.get(pk=designed_study.pk)
    assert plain_sql.is_loaded(fresh, "study")
    with django_assert_num_queries(0):
        assert fresh.study.pk == designed_study.pk


def test_a_reverse_one_to_one_is_cached_without_a_query(designed_study, django_assert_num_queries):
    participant = Participant.objects.create(study=designed_study, code="P1", enrolment_index=0)
    assignment = Assignment.objects.create(
        participant=participant,
        position=1,
        scenario=designed_study.scenarios.first(),
        system=designed_study.systems.first(),
    )
    fresh = Assignment.objects.get(pk=assignment.pk)
    plain_sql.cache_reverse_one(fresh, "session", None)
    with django_assert_num_queries(0):
        assert getattr(fresh, "session", None) is None


def test_no_other_module_uses_them():
    from pathlib import Path

    root = Path(plain_sql.__file__).resolve().parents[1]
    for folder in ("studies", "scoring", "sessionlab"):
        for path in (root / folder).rglob("*.py"):
            if path.name == "plain_sql.py" or "migrations" in path.parts:
                continue
            text = path.read_text()
            for internal in (
                "_prepare_cursor",
                "_state.fields_cache",
                "set_cached_value",
                "_plain_sql_cursors",
            ):
                assert internal not in text, f"{path.relative_to(root)} uses {internal}: go through plain_sql"
