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


def rows(sql: str, params: list | tuple = ()) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def execute(sql: str, params: list | tuple = ()) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def aware(value: datetime | None) -> datetime | None:
    """A datetime read by plain SQL, as the ORM gives it: SQLite hands back naive UTC."""
    if value is not None and timezone.is_naive(value):
        return value.replace(tzinfo=UTC)
    return value


@cache
def _columns(model: type[models.Model], names: tuple[str, ...]) -> tuple[str, list[models.Field]]:
    fields = [model._meta.get_field(name) for name in names]
    return ", ".join(connection.ops.quote_name(f.column) for f in fields), fields


def insert(model: type[models.Model], names: tuple[str, ...], values: list[tuple],
           returning: str | None = None) -> list[tuple]:
    """One INSERT of many rows; with `returning` (a column), the new rows' values of it, in order of `values`
    (PostgreSQL and SQLite both return them in the order of a multi-row VALUES)."""
    if not values:
        return []
    columns, fields = _columns(model, names)
    params = [field.get_db_prep_save(value, connection) for row in values
              for field, value in zip(fields, row, strict=True)]
    row_marks = f"({marks(len(fields))})"
    sql = f"INSERT INTO {table(model)} ({columns}) VALUES {', '.join([row_marks] * len(values))}"
    if returning is None:
        execute(sql, params)
        return []
    return rows(f"{sql} RETURNING {connection.ops.quote_name(returning)}", params)
