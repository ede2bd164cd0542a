"""Rules that look at another table, enforced by the database for every writer (SQLite and PostgreSQL).

- a participant's judgment and a reference judgment carry a grade of their study's scale (a reference judgment
  may also carry a negative grade, -9..-1, as judged);
- a session's queries are numbered 1..n without gaps (checked when a query is written);
- the event log is append-only (UPDATE is refused; withdrawal may still DELETE).
"""

from django.db import migrations

# (name, table, timing, condition that makes the write invalid, message)
_SESSION_STUDY = (
    "SELECT p.study_id FROM studies_searchsession s "
    "JOIN studies_assignment a ON a.id = s.assignment_id "
    "JOIN studies_participant p ON p.id = a.participant_id WHERE s.id = NEW.session_id"
)
RULES = [
    (
        "judgment_grade_in_scale",
        "studies_judgment",
        "INSERT OR UPDATE",
        f"NOT EXISTS (SELECT 1 FROM studies_gradelevel g WHERE g.value = NEW.grade AND g.study_id = ({_SESSION_STUDY}))",
        "judgment grade is outside the study's grade scale",
    ),
    (
        "reference_grade_in_scale",
        "studies_referencejudgment",
        "INSERT OR UPDATE",
        # A reference grade may also be negative (-9..-1: an assessor's "spam", TREC's -2), kept as judged for
        # the scoring formulations to read (studies.models.NEGATIVE_REFERENCE_GRADES; migration 0006 made
        # existing databases' trigger so; later migrations that remake the triggers read this list).
        "NEW.grade NOT BETWEEN -9 AND -1 AND "
        "NOT EXISTS (SELECT 1 FROM studies_gradelevel g WHERE g.value = NEW.grade AND g.study_id = "
        "(SELECT v.study_id FROM studies_referenceversion v WHERE v.id = NEW.version_id))",
        "reference judgment grade is outside the study's grade scale",
    ),
    (
        "query_positions_contiguous",
        "studies_query",
        "INSERT OR UPDATE",
        "NEW.position > 1 AND NOT EXISTS (SELECT 1 FROM studies_query q "
        "WHERE q.session_id = NEW.session_id AND q.position = NEW.position - 1)",
        "query positions must be contiguous: the previous position of this session is missing",
    ),
    ("event_append_only", "studies_event", "UPDATE", "1 = 1", "the event log is append-only"),
]


def _sqlite_sql(name, table, timing, condition, message):
    message = message.replace("'", "''")
    events = ["INSERT", "UPDATE"] if timing == "INSERT OR UPDATE" else [timing]
    return [
        f"CREATE TRIGGER {name}_{event.lower()} BEFORE {event} ON {table} "
        f"WHEN {condition} BEGIN SELECT RAISE(ABORT, '{message}'); END;"
        for event in events
    ]


def _postgres_sql(name, table, timing, condition, message):
    message = message.replace("'", "''")
    return [
        f"CREATE FUNCTION {name}() RETURNS trigger AS $$ BEGIN "
        f"IF {condition} THEN RAISE EXCEPTION '{message}' USING ERRCODE = 'check_violation'; END IF; "
        f"RETURN NEW; END; $$ LANGUAGE plpgsql;",
        f"CREATE TRIGGER {name} BEFORE {timing} ON {table} FOR EACH ROW EXECUTE FUNCTION {name}();",
    ]


def _drop_sql(vendor, name, table, timing):
    if vendor == "postgresql":
        return [f"DROP TRIGGER IF EXISTS {name} ON {table};", f"DROP FUNCTION IF EXISTS {name}();"]
    events = ["INSERT", "UPDATE"] if timing == "INSERT OR UPDATE" else [timing]
    return [f"DROP TRIGGER IF EXISTS {name}_{event.lower()};" for event in events]


def create_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    build = {"sqlite": _sqlite_sql, "postgresql": _postgres_sql}.get(vendor)
    if build is None:
        raise RuntimeError(f"SessionLab supports SQLite and PostgreSQL, not {vendor}")
    for rule in RULES:
        for statement in build(*rule):
            schema_editor.execute(statement)


def drop_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for name, table, timing, _condition, _message in RULES:
        for statement in _drop_sql(vendor, name, table, timing):
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("studies", "0001_initial")]
    operations = [migrations.RunPython(create_triggers, drop_triggers)]
