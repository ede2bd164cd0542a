"""Plain SQL for the statements the events endpoint runs on every batch
(studies/participation/events/ingest.py), and the one module that touches Django's private or undocumented API
for it. Each use, guarded by tests/studies/test_plain_sql_leans_on_these_django_internals.py (which fails
loudly if Django changes it): - `BaseDatabaseWrapper._prepare_cursor(cursor)`: wraps our server-binding
psycopg cursors in Django's
  CursorWrapper (errors, query logging, thread checks) (_cursors);
- an attribute of ours on the connection wrapper, `_plain_sql_cursors`: those cursors, kept for the
  connection's life (_cursors);
- `Model._state.fields_cache`: whether a related object is already loaded (is_loaded);
- `ForwardOneToOneDescriptor.related.set_cached_value`: caching a reverse one-to-one (cache_reverse_one).

Building the ORM's statements costs more than PostgreSQL takes to run them (docs/performance-load.md), so the
hot path writes its SQL once. Values still go through the model fields' own preparation (datetimes, JSON), and
the statements run on SQLite and PostgreSQL alike. On PostgreSQL, statements that do not wait on each other's
results go together in a psycopg pipeline (rows_together, run_all): a sync web worker waits for every round
trip.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from typing import Any, cast

from django.db import DEFAULT_DB_ALIAS, connection, connections, models
from django.utils import timezone


def table(model: type[models.Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def is_loaded(instance: models.Model, field_name: str) -> bool:
    """Whether `instance.<field_name>` (a relation) is loaded already, so reading it costs no query."""
    return field_name in instance._state.fields_cache


def cache_reverse_one(instance: models.Model, accessor: str, value: models.Model | None) -> None:
    """Set the reverse one-to-one `instance.<accessor>` (None: there is none) without a query."""
    getattr(type(instance), accessor).related.set_cached_value(instance, value)


def prepared(model: type[models.Model], name: str, value):
    """`value` as the database column of `model.name` takes it (a datetime made naive for SQLite, say)."""
    return _field(model, name).get_db_prep_save(value, connection)


def _field(model: type[models.Model], name: str) -> models.Field:
    # get_field finds reverse relations too; the names given here are always the model's own columns
    return cast(models.Field, model._meta.get_field(name))


def _column(field: models.Field) -> str:
    return cast(str, field.column)  # None only for a field with no column, never a concrete one


def marks(count: int) -> str:
    return ", ".join(["%s"] * count)


def _cursor(db):
    """On PostgreSQL a cursor that binds its parameters on the server: psycopg sends them as typed values
    (dumped in C) instead of quoting each into the SQL text in Python, as the ORM's client-side cursors do
    (which cost more than the statements here). Kept for the connection's life: making a psycopg cursor costs
    more than a short statement. Still inside Django's wrapper (errors, query logging, thread checks)."""
    if db.vendor != "postgresql":
        return db.cursor()
    return _cursors(db, 1)[0]


def _cursors(db, count: int) -> list:
    """`count` of the connection's server-binding cursors (PostgreSQL): a pipeline's reads need one each,
    since a cursor holds the result of its last statement only."""
    import psycopg

    db.ensure_connection()
    pool = getattr(db, "_plain_sql_cursors", None)
    if pool is None or (pool and (pool[0].closed or pool[0].connection is not db.connection)):
        pool = db._plain_sql_cursors = []
    with db.wrap_database_errors:
        while len(pool) < count:
            pool.append(psycopg.Cursor(db.connection))
    return [db._prepare_cursor(raw) for raw in pool[:count]]


def rows(sql: str, params: list | tuple = ()) -> list[tuple]:
    return _run("execute", sql, params, lambda cursor: cursor.fetchall())


def rows_together(statements: list[tuple[str, list]]) -> list[list[tuple]]:
    """The rows of several statements that do not depend on each other's results, in order. On PostgreSQL they
    go in one pipeline, each on a cursor of its own: one round trip for all of them, and for the BEGIN of a
    transaction they open (psycopg sends a BEGIN on its own otherwise). PostgreSQL still runs them one after
    the other, so a statement sees what the ones before it did (a lock taken first holds for the reads after
    it)."""
    db = connections[DEFAULT_DB_ALIAS]
    if db.vendor != "postgresql":
        return [
            _run("execute", sql, params, lambda cursor: cursor.fetchall(), db) for sql, params in statements
        ]
    cursors = _cursors(db, len(statements))
    with db.wrap_database_errors, db.connection.pipeline():
        for cursor, (sql, params) in zip(cursors, statements, strict=True):
            cursor.execute(sql, params)
        return [cursor.fetchall() for cursor in cursors]


def _run(method: str, sql: str, params, result, db=None):
    db = db or connections[DEFAULT_DB_ALIAS]  # once: each use of the `connection` proxy looks it up again
    cursor = _cursor(db)
    try:
        getattr(cursor, method)(sql, params)
        return result(cursor)
    finally:
        if db.vendor != "postgresql":  # on PostgreSQL it serves the connection's next statement too
            cursor.close()


def joined(expression: str) -> str:
    """An aggregate joining `expression` of a group's rows with commas, as text: string_agg or
    group_concat."""
    if connection.vendor == "postgresql":
        return f"string_agg(({expression})::text, ',')"
    return f"group_concat({expression}, ',')"


def aware(value: datetime | None) -> datetime | None:
    """A datetime read by plain SQL, as the ORM gives it: SQLite hands back naive UTC."""
    if value is not None and timezone.is_naive(value):
        return value.replace(tzinfo=UTC)
    return value


@cache
def select_list(model: type[models.Model], alias: str) -> str:
    """Every column of `model` under `alias`, in the order instance() takes them."""
    return ", ".join(f"{alias}.{connection.ops.quote_name(_column(f))}" for f in model._meta.concrete_fields)


def instance(model: type[models.Model], values) -> models.Model:
    """The model instance a row of select_list(model) holds, with its values converted as the ORM would."""
    return model.from_db(
        DEFAULT_DB_ALIAS,
        None,  # type: ignore[arg-type]  # field_names: read only when some fields are deferred
        [load(value) for load, value in zip(_loaders(model), values, strict=True)],
    )


def instances(row, *models: type[models.Model]) -> list[models.Model | None]:
    """One instance per model from a row of their select lists side by side; None for a model whose columns
    are all NULL (the missing side of a LEFT JOIN)."""
    out, start = [], 0
    for model in models:
        width = len(model._meta.concrete_fields)
        values = row[start : start + width]
        out.append(None if values[0] is None else instance(model, values))
        start += width
    return out


@cache
def _loaders(model: type[models.Model]) -> tuple:
    loaders: list[Callable[[Any], Any]] = []
    for f in model._meta.concrete_fields:
        kind = f.get_internal_type()
        if kind == "DateTimeField":
            loaders.append(aware)
        elif kind == "JSONField":  # Django's connections hand JSON back as text, for the field to decode

            def load_json(value, field=f):
                if value is None or not isinstance(value, str | bytes):
                    return value
                return field.from_db_value(value, None, connection)

            loaders.append(load_json)
        elif kind == "BooleanField":  # SQLite's 0 and 1
            loaders.append(lambda value: value if value is None else bool(value))
        else:
            loaders.append(_as_is_loaded)
    return tuple(loaders)


def _as_is_loaded(value):
    return value


def _as_is(value, ops):
    return value


@cache
def _columns(model: type[models.Model], names: tuple[str, ...]) -> tuple[str, tuple]:
    """The quoted columns and, per field, how a value is made ready for the database: what
    Field.get_db_prep_save does for these fields, without its generic dispatch on every value."""
    fields = [_field(model, name) for name in names]
    preparers: list[Callable[[Any, Any], Any]] = []
    for f in fields:
        kind = f.get_internal_type()
        if kind == "DateTimeField":
            preparers.append(lambda value, ops: ops.adapt_datetimefield_value(value))
        elif kind == "JSONField":
            json_encoder = cast(models.JSONField, f).encoder

            def prepare_json(value, ops, encoder=json_encoder):
                return ops.adapt_json_value(value, encoder)

            preparers.append(prepare_json)
        elif kind in _PLAIN_KINDS:
            preparers.append(_as_is)
        else:

            def prepare(value, ops, field=f):
                return field.get_db_prep_save(value, ops.connection)

            preparers.append(prepare)
    return ", ".join(connection.ops.quote_name(_column(f)) for f in fields), tuple(preparers)


_PLAIN_KINDS = {
    "ForeignKey",
    "IntegerField",
    "BigIntegerField",
    "SmallIntegerField",
    "PositiveIntegerField",
    "PositiveSmallIntegerField",
    "PositiveBigIntegerField",
    "CharField",
    "TextField",
    "BooleanField",
}


# Rows per INSERT: at most this many parameters, so that psycopg keeps the statement's conversion cached (it
# caches statements of up to 50 parameters) and PostgreSQL prepares it; a batch needs only a few shapes.
MAX_PARAMS = 50


def insert_statements(
    model: type[models.Model], names: tuple[str, ...], values: list[tuple]
) -> list[tuple[str, list]]:
    """The INSERTs of many rows, as (sql, params) for run_all, in as few statements as keep under MAX_PARAMS
    each."""
    db = connections[DEFAULT_DB_ALIAS]
    columns, preparers = _columns(model, names)
    ops = db.ops
    per_statement = max(1, MAX_PARAMS // len(preparers))
    into = f"INSERT INTO {table(model)} ({columns}) VALUES "
    row_marks = f"({marks(len(preparers))})"
    statements = []
    for start in range(0, len(values), per_statement):
        chunk = values[start : start + per_statement]
        params = [prepare(value, ops) for row in chunk for prepare, value in zip(preparers, row, strict=True)]
        statements.append((f"{into}{', '.join([row_marks] * len(chunk))}", params))
    return statements


def run_all(statements: list[tuple[str, list]]) -> None:
    """Run statements whose results nobody reads (writes), in order. On PostgreSQL they go in one psycopg
    pipeline: one round trip for all of them instead of one each, which under load is what a sync web worker
    spends its time waiting on (docs/performance-load.md). An error in any of them is raised here, as Django's
    own (IntegrityError...), so the caller's transaction rolls back as it would after a single statement."""
    if not statements:
        return
    db = connections[DEFAULT_DB_ALIAS]
    if db.vendor != "postgresql" or len(statements) == 1:
        for sql, params in statements:
            _run("execute", sql, params, lambda cursor: None, db)
        return
    cursor = _cursor(db)
    with db.wrap_database_errors, db.connection.pipeline():
        for sql, params in statements:
            cursor.execute(sql, params)
