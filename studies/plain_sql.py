"""Plain SQL for the statements the events endpoint runs on every batch (studies/ingest.py).

Building the ORM's statements costs more than PostgreSQL takes to run them (docs/performance-load.md), so the hot
path writes its SQL once. Values still go through the model fields' own preparation (datetimes, JSON), and the
statements run on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache

from django.db import connection, models
from django.utils import timezone


def table(model: type[models.Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def marks(count: int) -> str:
    return ", ".join(["%s"] * count)


def _cursor():
    """On PostgreSQL a cursor that binds its parameters on the server: psycopg sends them as typed values
    (dumped in C) instead of quoting each into the SQL text in Python, which the ORM's client-side cursors do
    (and which cost more than the statements here). Still Django's wrapper: errors, logging, thread checks."""
    if connection.vendor != "postgresql":
        return connection.cursor()
    import psycopg

    connection.ensure_connection()
    with connection.wrap_database_errors:
        return connection._prepare_cursor(psycopg.Cursor(connection.connection))


def rows(sql: str, params: list | tuple = ()) -> list[tuple]:
    with _cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def execute(sql: str, params: list | tuple = ()) -> int:
    with _cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def aware(value: datetime | None) -> datetime | None:
    """A datetime read by plain SQL, as the ORM gives it: SQLite hands back naive UTC."""
    if value is not None and timezone.is_naive(value):
        return value.replace(tzinfo=UTC)
    return value


def _as_is(value, ops):
    return value


@cache
def _columns(model: type[models.Model], names: tuple[str, ...]) -> tuple[str, tuple]:
    """The quoted columns and, per field, how a value is made ready for the database: what
    Field.get_db_prep_save does for these fields, without its generic dispatch on every value."""
    fields = [model._meta.get_field(name) for name in names]
    preparers = []
    for f in fields:
        kind = f.get_internal_type()
        if kind == "DateTimeField":
            preparers.append(lambda value, ops: ops.adapt_datetimefield_value(value))
        elif kind == "JSONField":
            preparers.append(lambda value, ops, encoder=f.encoder: ops.adapt_json_value(value, encoder))
        elif kind in _PLAIN_KINDS:
            preparers.append(_as_is)
        else:
            preparers.append(lambda value, ops, field=f: field.get_db_prep_save(value, ops.connection))
    return ", ".join(connection.ops.quote_name(f.column) for f in fields), tuple(preparers)


_PLAIN_KINDS = {"ForeignKey", "IntegerField", "BigIntegerField", "SmallIntegerField", "PositiveIntegerField",
                "PositiveSmallIntegerField", "PositiveBigIntegerField", "CharField", "TextField", "BooleanField"}


def insert(model: type[models.Model], names: tuple[str, ...], values: list[tuple],
           returning: tuple[str, ...] = ()) -> list[tuple]:
    """One INSERT of many rows; with `returning` (column names), those columns of the new rows, in no promised
    order (return a key with them)."""
    if not values:
        return []
    columns, preparers = _columns(model, names)
    ops = connection.ops
    row_marks = f"({marks(len(preparers))})"
    if not returning:
        # One statement for one row, sent for every row in one round trip (psycopg pipelines executemany): its
        # text is the same whatever the batch size, so the driver parses it once and the server prepares it.
        with _cursor() as cursor:
            cursor.executemany(f"INSERT INTO {table(model)} ({columns}) VALUES {row_marks}", [
                [prepare(value, ops) for prepare, value in zip(preparers, row, strict=True)] for row in values])
        return []
    params = [prepare(value, ops) for row in values for prepare, value in zip(preparers, row, strict=True)]
    sql = f"INSERT INTO {table(model)} ({columns}) VALUES {', '.join([row_marks] * len(values))}"
    return rows(f"{sql} RETURNING {', '.join(connection.ops.quote_name(c) for c in returning)}", params)

