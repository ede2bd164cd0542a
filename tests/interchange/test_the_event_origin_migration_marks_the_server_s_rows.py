"""The migration that added Event.origin read an existing database: the rows of types only the
server writes and the server's time-outs became the server's, every other row the client's, and each
participant's event_bytes the size of their client rows' data; the append-only trigger holds afterwards.
Run backwards to before it and forwards again over a worked study."""

import json

import pytest
from django.db import DatabaseError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from studies.models import Event, EventOrigin, Participant

pytestmark = pytest.mark.django_db(transaction=True)


def _migration_and_parent():
    graph = MigrationExecutor(connection).loader.graph
    [node] = [key for key in graph.nodes if key[0] == "studies" and key[1].endswith("_event_origin")]
    [parent] = [key for key in graph.node_map[node].parents if key[0] == "studies"]
    return node, parent


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)


def test_the_migration_marks_server_rows_and_counts_client_data(worked_study):
    study = worked_study
    participant = study.participants.order_by("enrolment_index").first()
    session = participant.assignments.get(position=1).session
    Event.objects.create(
        participant=participant,
        session=session,
        type="session_end",
        client_event_id="server-timeout-1",
        payload={"data": {"reason": "timed_out"}, "ack": {"ok": True}},
    )
    Event.objects.create(
        participant=participant,
        session=session,
        type="gold",
        client_event_id="g1",
        payload={"data": {"d1": 1}, "ack": {"ok": True}},
    )
    node, parent = _migration_and_parent()
    leaves = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        _migrate([parent])
        _migrate(leaves)
    finally:
        _migrate(leaves)
    origins = dict(Event.objects.filter(participant=participant).values_list("client_event_id", "origin"))
    kinds = dict(Event.objects.filter(participant=participant).values_list("client_event_id", "type"))
    assert origins["server-timeout-1"] == origins["g1"] == EventOrigin.SERVER
    for client_id, kind in kinds.items():
        if kind in ("session_start", "gold") or client_id.startswith("server-"):
            assert origins[client_id] == EventOrigin.SERVER, client_id
        else:
            assert origins[client_id] == EventOrigin.CLIENT, client_id
    assert EventOrigin.CLIENT in origins.values()
    expected = sum(
        len(json.dumps(data, separators=(",", ":")))
        for data in Event.objects.filter(participant=participant, origin=EventOrigin.CLIENT).values_list(
            "payload__data", flat=True
        )
    )
    assert Participant.objects.get(pk=participant.pk).event_bytes == expected > 0
    with pytest.raises(DatabaseError), transaction.atomic():
        Event.objects.filter(participant=participant).update(type="x")  # still append-only
