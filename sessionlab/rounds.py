"""Reading a large queryset a round at a time, each round its own query, so that a process holds one round's
rows whether or not the database streams a result (docs/deploying.md, "Topology": a pooler).

`.iterator()` streams on PostgreSQL only through a server-side cursor. Behind PgBouncer in transaction mode
those are off (DB_DISABLE_SERVER_SIDE_CURSORS=1), and psycopg then receives the query's whole result at
once: an export's list of sessions, each row joined with its participant, scenario and system, would be held
whole. Here only the primary keys are read whole (a few bytes each), then each round's rows by their keys.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import QuerySet


def pk_rounds(queryset: QuerySet, size: int) -> Iterator[list]:
    """The queryset's primary keys, in its order, `size` at a time."""
    pks = list(queryset.values_list("pk", flat=True))
    for start in range(0, len(pks), size):
        yield pks[start : start + size]


def in_rounds(chosen: QuerySet, rows: QuerySet, size: int) -> Iterator[list]:
    """The objects `chosen` selects, in its order, `size` at a time: a query per round reads them from `rows`
    (the same model, with the select_related they need) by primary key alone. Not `chosen` itself: its
    filters (a study's participants...) can lead the planner to walk the whole study for each round (SQLite
    did: 0.23 s a round at 2,000 participants, quadratic in the study). A row deleted between the two reads
    is left out; one added after the first is not read."""
    for pks in pk_rounds(chosen, size):
        found = rows.in_bulk(pks)
        yield [found[pk] for pk in pks if pk in found]


def values_by_pk(queryset: QuerySet, fields: tuple[str, ...], size: int) -> Iterator[tuple]:
    """`values_list(*fields)` of the queryset's rows in primary-key order, `size` rows a query (a keyset
    page: each query starts after the last key read), for tables too large even for their keys."""
    last = None
    while True:
        page = queryset.order_by("pk") if last is None else queryset.filter(pk__gt=last).order_by("pk")
        rows = list(page.values_list("pk", *fields)[:size])
        for row in rows:
            yield row[1:]
        if len(rows) < size:
            return
        last = rows[-1][0]
