"""The databases of bench/events_scale.py: the measured study (the demo's simulated sessions, as
bench/exports_memory builds them) and background studies of generated events up to a total, in set-based SQL.

The background copies the measured study's own event rows (type, payload, origin) round-robin, so its rows
have the sizes and the mix of types of real ones; its sessions belong to participants of other studies, spread
over the two years before the measured study, with ids below the measured study's events: the measured study
is the newest, as a study being analysed is on a server that has run others before it.
"""

from __future__ import annotations

import time

BACKGROUND_STUDIES = 4
EVENTS_PER_SESSION = 60  # a 10-20 minute session with a few queries; the demo's simulated ones log about 20
SESSIONS_PER_PARTICIPANT = 4
BACKGROUND_DAYS = 730


def measured_study_build(participants: int):
    """The demo study (generated collection) with `participants` simulated participants, not scored."""
    from studies.demo import GENERATED, demo_study_load

    return demo_study_load(participants=participants, data_dir=GENERATED).study


def _sql(statement: str, params=None) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.rowcount


def _background_study(owner, number: int, participants: int):
    """A study with the measured one's design, `participants` enrolled through the service once and cloned in
    SQL (the service plans each row in Python: minutes for tens of thousands), each with four sessions."""
    from studies.design import services
    from studies.models import Participant

    study = services.study_create(owner=owner, name=f"Background study {number}", status="open")
    for n in range(1, 5):
        services.scenario_add(
            study=study, code=f"S{n}", title=f"Scenario {n}", text="background", topic_id=str(n)
        )
    for code in "AB":
        services.system_add(study=study, code=code, name=f"System {code}")
    template = services.participants_enrol(study=study, count=1)[0]
    columns = [f.column for f in Participant._meta.concrete_fields if f.column != "id"]
    overrides = {
        "code": "'B' || g",
        "enrolment_index": "g",
        "plan_row": "g",
        "access_token": f"'bg-{study.pk}-' || g",
        "access_token_digest": f"encode(sha256(convert_to('bg-{study.pk}-' || g, 'UTF8')), 'hex')",
    }
    chosen = ", ".join(overrides.get(c, f't."{c}"') for c in columns)
    _sql(
        f"INSERT INTO studies_participant ({', '.join(f'{chr(34)}{c}{chr(34)}' for c in columns)}) "
        f"SELECT {chosen} FROM studies_participant t, generate_series(1, %s) g WHERE t.id = %s",
        [participants - 1, template.pk],
    )
    _sql(
        "INSERT INTO studies_assignment (participant_id, position, scenario_id, system_id, retake_of_id, "
        "retake_reason, pre_task_answers) "
        "SELECT p.id, a.position, a.scenario_id, a.system_id, NULL, '', '{}' "
        "FROM studies_participant p JOIN studies_assignment a ON a.participant_id = %s "
        "WHERE p.study_id = %s AND p.id <> %s",
        [template.pk, study.pk, template.pk],
    )
    return study


def _background_sessions(study_ids: list[int], before) -> int:
    """A finished session for every assignment of the background studies, started in order of id over the
    BACKGROUND_DAYS before `before`."""
    return _sql(
        "INSERT INTO studies_searchsession "
        "(assignment_id, started_at, ended_at, end_reason, post_task_answers) "
        "SELECT a.id, s.at, s.at + interval '20 minutes', 'satisfied', '{}' FROM ("
        "  SELECT a.id, %s - make_interval(days => %s) "
        "    + (row_number() OVER (ORDER BY a.id)) * make_interval(days => %s) / count(*) OVER () AS at"
        "  FROM studies_assignment a JOIN studies_participant p ON p.id = a.participant_id"
        "  WHERE p.study_id = ANY(%s)) s JOIN studies_assignment a ON a.id = s.id",
        [before, BACKGROUND_DAYS, BACKGROUND_DAYS, study_ids],
    )


def _background_events(study_ids: list[int], measured_study_id: int, total: int) -> int:
    """`total` events over the background sessions, EVENTS_PER_SESSION each (the last sessions get none once
    the total is reached), copied round-robin from the measured study's events, a session's 5 s apart."""
    _sql(
        "CREATE TEMP TABLE bench_template AS SELECT row_number() OVER (ORDER BY e.id) - 1 AS n, e.type, "
        "e.payload, e.origin FROM studies_event e JOIN studies_participant p ON p.id = e.participant_id "
        "WHERE p.study_id = %s",
        [measured_study_id],
    )
    templates = _sql("SELECT 1 FROM bench_template")
    sessions = -(-total // EVENTS_PER_SESSION)
    # Without the foreign keys' per-row triggers (the rows name sessions and participants made above): the
    # generation is about twice as fast; the indexes are maintained as in production.
    _sql("SET session_replication_role = replica")
    inserted = 0
    started = time.perf_counter()
    batch = 20_000
    for offset in range(0, sessions, batch):
        inserted += _sql(
            "INSERT INTO studies_event (participant_id, session_id, type, client_event_id, sequence, "
            "client_time, server_time, payload, origin) "
            "SELECT a.participant_id, s.id, t.type, 'bg-' || s.id || '-' || g, g, "
            "s.started_at + g * interval '5 seconds', s.started_at + g * interval '5 seconds', "
            "t.payload, t.origin "
            "FROM (SELECT s.id, s.started_at, s.assignment_id, row_number() OVER (ORDER BY s.id) - 1 AS k "
            "  FROM studies_searchsession s JOIN studies_assignment a ON a.id = s.assignment_id "
            "  JOIN studies_participant p ON p.id = a.participant_id WHERE p.study_id = ANY(%s) "
            "  ORDER BY s.id OFFSET %s LIMIT %s) s "
            "JOIN studies_assignment a ON a.id = s.assignment_id "
            "CROSS JOIN generate_series(1, %s) g "
            "JOIN bench_template t ON t.n = (s.k * %s + g) %% %s "
            "WHERE s.k * %s + g <= %s "
            "ORDER BY s.id, g",
            [
                study_ids,
                offset,
                batch,
                EVENTS_PER_SESSION,
                EVENTS_PER_SESSION,
                templates,
                EVENTS_PER_SESSION,
                total,
            ],
        )
        print(f"  background events: {inserted:,} ({time.perf_counter() - started:.0f} s)", flush=True)
        if inserted >= total:
            break
    _sql("SET session_replication_role = DEFAULT")
    _sql("DROP TABLE bench_template")
    return inserted


def _measured_events_to_the_end(study_id: int) -> int:
    """Move the measured study's events after the background's (new ids, same values): the newest rows of the
    log, as a study being analysed is. The rows are copied aside, deleted and inserted again (the log refuses
    UPDATE)."""
    _sql(
        "CREATE TEMP TABLE bench_moved AS SELECT e.* FROM studies_event e "
        "JOIN studies_participant p ON p.id = e.participant_id WHERE p.study_id = %s ORDER BY e.id",
        [study_id],
    )
    _sql(
        "DELETE FROM studies_event e USING studies_participant p WHERE p.id = e.participant_id "
        "AND p.study_id = %s",
        [study_id],
    )
    moved = _sql(
        "INSERT INTO studies_event (participant_id, session_id, type, client_event_id, sequence, "
        "client_time, server_time, payload, origin) "
        "SELECT participant_id, session_id, type, client_event_id, sequence, client_time, server_time, "
        "payload, origin FROM bench_moved ORDER BY id"
    )
    _sql("DROP TABLE bench_moved")
    return moved


def background_build(measured, total_events: int) -> None:
    """Background studies holding `total_events` less the measured study's, then the measured study's events
    moved after them; VACUUM ANALYZE at the end."""
    from django.db import connection

    from studies.models import Event, SearchSession

    own = Event.objects.filter(participant__study=measured).count()
    wanted = max(0, total_events - own)
    first = (
        SearchSession.objects.filter(assignment__participant__study=measured).order_by("started_at").first()
    )
    before = first.started_at if first else None
    participants = max(2, -(-wanted // (EVENTS_PER_SESSION * SESSIONS_PER_PARTICIPANT * BACKGROUND_STUDIES)))
    started = time.perf_counter()
    studies = [_background_study(measured.owner, n, participants) for n in range(1, BACKGROUND_STUDIES + 1)]
    ids = [study.pk for study in studies]
    sessions = _background_sessions(ids, before)
    print(f"  background: {len(ids)} studies, {sessions:,} sessions ({time.perf_counter() - started:.0f} s)")
    _background_events(ids, measured.pk, wanted)
    moved = _measured_events_to_the_end(measured.pk)
    print(f"  measured study's {moved:,} events moved after the background's")
    connection.cursor().execute("VACUUM ANALYZE")
    print(f"  built and analysed in {time.perf_counter() - started:.0f} s")
