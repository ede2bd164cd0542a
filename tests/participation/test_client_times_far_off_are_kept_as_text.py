"""A client time further than CLIENT_TIME_WINDOW_SECONDS from the server's receive time, or outside years
1-9999 in UTC, is kept as raw text in the event's data, never as a timestamp: by the events endpoints, the
forms and the archive importer alike (studies/event_checks.client_time_checked)."""

import datetime as dt
import json

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive_import
from studies.models import Event, Study
from studies.participation.events.event_checks import TOO_FAR, client_time_checked
from studies.participation.way.steps import events_ingest, query_log

from .conftest import cid

WINDOW = dt.timedelta(days=1)


def test_the_rule(settings):
    now = dt.datetime(2026, 11, 25, 12, 0, tzinfo=dt.UTC)
    check = lambda value: client_time_checked(value, received_at=now, window=WINDOW)  # noqa: E731
    assert check(None) == (None, None, None) and check("") == (None, None, None)
    assert check("2026-11-25T13:00:00+01:00") == (now, None, None)
    assert check("2026-11-25T11:00:00") == (now - dt.timedelta(hours=1), None, None)  # naive: UTC
    assert check(now.timestamp() * 1000) == (now, None, None)
    assert check("2026-11-27T12:00:00Z") == (None, "2026-11-27T12:00:00Z", TOO_FAR)
    assert check("0001-01-01T00:00:00+14:00")[:2] == (None, "0001-01-01T00:00:00+14:00")
    assert check("9999-12-31T23:00:00-05:00")[:2] == (None, "9999-12-31T23:00:00-05:00")
    assert check(1e30)[:2] == (None, "1e+30") and check(-(2**62))[0] is None
    assert check("tomorrow")[:2] == (None, "tomorrow") and check("2026-02-30T10:00:00")[0] is None
    assert check(True)[:2] == (None, "True") and check("x" * 500)[1] == "x" * 100
    assert check(now - dt.timedelta(hours=2)) == (
        now - dt.timedelta(hours=2),
        None,
        None,
    )  # a service's caller
    assert check(dt.datetime(1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=14))))[0] is None


@pytest.mark.parametrize(
    "sent",
    ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "2020-01-01T00:00:00Z", 1e30, "not a time"],
)
def test_the_events_endpoint_keeps_a_far_time_as_text(participant, session, sent):
    acks = events_ingest(
        participant=participant,
        events=[{"id": "t1", "type": "query", "session": session.pk, "time": sent, "data": {"text": "wing"}}],
    )
    assert acks[0]["ok"]
    event = Event.objects.get(client_event_id="t1")
    assert event.client_time is None and event.payload["data"]["client_time_raw"] == str(sent)


def test_the_window_is_a_setting(participant, session, settings):
    sent = (timezone.now() - dt.timedelta(hours=3)).isoformat()
    settings.CLIENT_TIME_WINDOW_SECONDS = 3600
    events_ingest(participant=participant, events=[{"id": "a", "type": "tab_hidden", "time": sent}])
    settings.CLIENT_TIME_WINDOW_SECONDS = 4 * 3600
    events_ingest(participant=participant, events=[{"id": "b", "type": "tab_hidden", "time": sent}])
    a, b = Event.objects.get(client_event_id="a"), Event.objects.get(client_event_id="b")
    assert a.client_time is None and a.payload["data"] == {"client_time_raw": sent}
    assert b.client_time.isoformat() == sent and b.payload["data"] == {}


def test_a_form_keeps_a_far_time_as_text_and_a_bad_event_id_is_a_400(client, participant):
    url = f"/p/{participant.access_token}/consent/"
    bad = client.post(
        url,
        {
            "decision": "accept",
            "consent_version": participant.study.consent_version,
            "client_event_id": "no spaces allowed",
            "client_time": "x",
        },
    )
    assert bad.status_code == 400 and "client event id" in bad.content.decode()
    client.post(
        url,
        {
            "decision": "accept",
            "consent_version": participant.study.consent_version,
            "client_event_id": "c1",
            "sequence": "99999999999",
            "client_time": "0001-01-01T00:00:00+14:00",
        },
    )
    event = Event.objects.get(client_event_id="c1")
    assert (event.client_time, event.sequence) == (None, None)
    assert event.payload["data"]["client_time_raw"] == "0001-01-01T00:00:00+14:00"
    answers = {"search_engine_years": "7", "domain_years": "21", "search_skill": "2"}
    bad = client.post(f"/p/{participant.access_token}/questionnaire/", {**answers, "client_event_id": "ü"})
    assert bad.status_code == 400 and not participant.events.filter(type="questionnaire").exists()
    client.post(
        f"/p/{participant.access_token}/questionnaire/",
        {
            "search_engine_years": "7",
            "domain_years": "21",
            "search_skill": "2",
            "client_event_id": "c2",
            "client_time": "now\x00\x00",
        },
    )
    event = Event.objects.get(client_event_id="c2")  # a NUL cannot be stored in PostgreSQL's jsonb
    assert event.client_time is None and event.payload["data"]["client_time_raw"] == "now"


@pytest.mark.parametrize("value", ["²", "9" * 30, "-1", ""])
def test_a_form_naming_no_scenario_or_search_is_a_400(client, participant, value):
    assert client.post(f"/p/{participant.access_token}/start/", {"assignment": value}).status_code == 400
    assert client.post(f"/p/{participant.access_token}/post-task/", {"session": value}).status_code == 400


def _old_row(participant):
    """An event stored before the rule: a client time in 1 BC in UTC (PostgreSQL kept it; on SQLite the text
    Python cannot read). Inserted by hand, as the trigger forbids fixing it afterwards."""
    moment = "0001-01-01T00:00:00+14:00" if connection.vendor == "postgresql" else "0000-12-31 10:00:00"
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {Event._meta.db_table} (participant_id, type, client_event_id, client_time,"
            " server_time, payload) VALUES (%s, 'tab_hidden', 'old', %s, %s, %s)",
            [participant.pk, moment, timezone.now(), json.dumps({"data": {}, "ack": {"ok": True}})],
        )


def test_the_events_api_and_the_exports_read_an_old_far_time_as_null(participant, alice, tmp_path):
    events_ingest(participant=participant, events=[{"id": "new", "type": "tab_hidden"}])
    _old_row(participant)
    api = APIClient()
    api.force_authenticate(alice)
    page = api.get(f"/api/studies/{participant.study_id}/events/")
    assert page.status_code == 200
    assert {e["client_event_id"]: e["client_time"] for e in page.json()["results"]} == {
        "new": None,
        "old": None,
    }
    path = tmp_path / "study.json"
    call_command("export_study", participant.study.slug, "-o", str(path))
    events = json.loads(path.read_text())["participants"][0]["events"]
    assert [(e["client_event_id"], e["client_time"]) for e in events] == [("new", None), ("old", None)]


def test_a_form_resent_with_the_id_of_an_old_far_time_row_is_answered(participant, client):
    _old_row(participant)  # client event id "old"
    response = client.post(
        f"/p/{participant.access_token}/consent/",
        {
            "decision": "accept",
            "consent_version": participant.study.consent_version,
            "client_event_id": "old",
        },
    )
    assert response.status_code == 302  # the stored answer replayed, its time never read


def test_the_admin_reads_an_old_far_time_as_null(participant, admin_client):
    _old_row(participant)
    pk = Event.objects.values_list("pk", flat=True).get(client_event_id="old")
    assert admin_client.get("/admin/studies/event/").status_code == 200
    page = admin_client.get(f"/admin/studies/event/{pk}/change/")
    assert page.status_code == 200 and "client time" in page.content.decode().lower()


@pytest.fixture
def archive(participant, session, tmp_path):
    events_ingest(
        participant=participant,
        events=[
            {
                "id": "e1",
                "type": "query",
                "session": session.pk,
                "time": timezone.now().isoformat(),
                "data": {"text": "wing"},
            }
        ],
    )
    path = tmp_path / "study.json"
    call_command("export_study", participant.study.slug, "-o", str(path))
    return path


def _event_of(data):
    return next(e for p in data["participants"] for e in p["events"] if e["client_event_id"] == "e1")


def test_the_importer_keeps_a_far_time_as_text_and_says_where(archive, alice, capsys):
    data = json.loads(archive.read_text())
    _event_of(data)["client_time"] = "2001-01-01T00:00:00+00:00"
    archive.write_text(json.dumps(data, indent=1))
    call_command("import_study", str(archive), "--owner", "alice", "--name", "Copy")
    event = Event.objects.get(participant__study__name="Copy", client_event_id="e1")
    assert (
        event.client_time is None and event.payload["data"]["client_time_raw"] == "2001-01-01T00:00:00+00:00"
    )
    printed = capsys.readouterr().out
    lines = archive.read_text().splitlines()
    line = next(n for n, text in enumerate(lines) if '"client_event_id": "e1"' in text)
    while not lines[line].rstrip().endswith("{"):  # the line the event's object starts on
        line -= 1
    assert f"{archive}:{line + 1}: $.participants[0].events[" in printed and "].client_time: " in printed


@pytest.mark.parametrize(
    "field, value, words",
    [
        ("client_time", "0001-01-01T00:00:00+14:00", "outside years 1-9999 in UTC"),
        ("server_time", "0001-01-01T00:00:00+14:00", "outside years 1-9999 in UTC"),
        ("sequence", 2**31, "outside 0..2147483647"),
    ],
)
def test_the_importer_refuses_what_no_export_writes_naming_file_line_and_field(
    archive, alice, field, value, words
):
    data = json.loads(archive.read_text())
    _event_of(data)[field] = value
    archive.write_text(json.dumps(data, indent=1))
    before = Study.objects.count()
    with pytest.raises(ImportFailure) as failure:
        study_archive_import(path=archive, owner=alice, name="Copy")
    assert failure.value.field.endswith(f"].{field}") and words in failure.value.reason
    assert failure.value.line is not None and Study.objects.count() == before


def test_a_far_time_from_a_service_is_kept_as_text(participant, session):
    query_log(
        participant=participant,
        session=session,
        text="wing",
        client_event_id=cid(),
        client_time="1999-12-31T23:59:59Z",
    )
    event = Event.objects.get(type="query")
    assert event.client_time is None and event.payload["data"]["client_time_raw"] == "1999-12-31T23:59:59Z"
