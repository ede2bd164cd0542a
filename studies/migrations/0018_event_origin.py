"""Who wrote each event (client or server), and the bytes of event payloads each participant's clients stored.

Existing rows: an event of a type only the server writes (studies/participation/event_checks.py,
SERVER_EVENT_TYPES, as of this migration) and the server's time-out `session_end` rows (client ids
`server-timeout-...`, `server-study-timeout-...`) are marked server; the rest stay client. A participant's
counter starts at the size of their client rows' data. The event log is append-only (a trigger refuses
UPDATE), and on SQLite adding a field with a default rebuilds the table: so 0002's triggers are dropped first
and made again afterwards (as 0014 does; the same statements on PostgreSQL).
"""

import importlib
import json

from django.db import migrations, models

_triggers = importlib.import_module("studies.migrations.0002_integrity_triggers")

# Frozen here: a later change to the set must not change what this migration did.
SERVER_EVENT_TYPES = (
    "consent",
    "consent_declined",
    "questionnaire",
    "pre_task",
    "post_task",
    "session_start",
    "check",
    "gold",
    "gold_pair",
    "page_reload",
)


def triggers_remake(apps, schema_editor):
    _triggers.drop_triggers(apps, schema_editor)
    _triggers.create_triggers(apps, schema_editor)


def rows_mark(apps, schema_editor):
    from django.db.models import Q

    Event = apps.get_model("studies", "Event")
    Event.objects.filter(
        Q(type__in=SERVER_EVENT_TYPES)
        | Q(type="session_end", client_event_id__startswith="server-timeout-")
        | Q(type="session_end", client_event_id__startswith="server-study-timeout-")
    ).update(origin="server")
    # Each participant's client data, measured as the batch measures it (compact JSON, event_checks): read
    # once, row by row, so that SQLite and PostgreSQL (whose jsonb text differs) count alike.
    sizes: dict[int, int] = {}
    rows = Event.objects.filter(origin="client").values_list("participant_id", "payload").order_by()
    for participant_id, payload in rows.iterator(chunk_size=2000):
        data = payload.get("data") if isinstance(payload, dict) else None
        size = len(json.dumps(data if data is not None else {}, sort_keys=True, separators=(",", ":")))
        sizes[participant_id] = sizes.get(participant_id, 0) + size
    Participant = apps.get_model("studies", "Participant")
    for participant_id, size in sizes.items():
        Participant.objects.filter(pk=participant_id).update(event_bytes=size)


class Migration(migrations.Migration):
    dependencies = [
        ("studies", "0017_balance_sweep"),
    ]

    operations = [
        migrations.RunPython(_triggers.drop_triggers, triggers_remake),
        migrations.AddField(
            model_name="event",
            name="origin",
            field=models.CharField(
                choices=[("client", "client"), ("server", "server")],
                default="client",
                db_default="client",
                max_length=6,
            ),
        ),
        migrations.AddField(
            model_name="participant",
            name="event_bytes",
            field=models.BigIntegerField(default=0, db_default=0, editable=False),
        ),
        migrations.RunPython(rows_mark, migrations.RunPython.noop),
        migrations.RunPython(triggers_remake, _triggers.drop_triggers),
    ]
