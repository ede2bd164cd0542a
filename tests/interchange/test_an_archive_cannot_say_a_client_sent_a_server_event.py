"""An archive's events carry who wrote them (`origin`): an event of a type only the server writes that says
it came from the client is refused by file, line and field, and nothing is imported; an unknown origin too.
An older archive without the field is read as before: those types are the server's."""

import json

import pytest

from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive_import
from studies.models import Event, EventOrigin

from ..participation.test_a_client_cannot_send_an_event_type_the_server_writes import FORGED
from .test_malformed_files_change_nothing import counts

pytestmark = pytest.mark.django_db


def test_the_export_says_who_wrote_each_event(archive):
    events = json.loads(archive.read_text())["participants"][0]["events"]
    assert {e["origin"] for e in events if e["type"] == "session_start"} == {"server"}
    assert {e["origin"] for e in events if e["type"] == "query"} == {"client"}


@pytest.mark.parametrize("kind", FORGED)
def test_a_server_type_from_the_client_is_refused_by_file_line_and_field(archive, alice, kind):
    data = json.loads(archive.read_text())
    data["participants"][0]["events"][1].update(type=kind, origin="client")
    text = json.dumps(data, indent=1)
    archive.write_text(text)
    before = counts()
    with pytest.raises(ImportFailure) as failure:
        study_archive_import(path=archive, owner=alice)
    assert failure.value.field == "$.participants[0].events[1].origin"
    assert failure.value.reason == f"a {kind!r} event is written by the server; a client cannot send it"
    assert failure.value.line is not None and failure.value.line > 1
    assert counts() == before


def test_an_origin_that_is_neither_is_refused(archive, alice):
    data = json.loads(archive.read_text())
    data["participants"][0]["events"][1]["origin"] = "robot"
    archive.write_text(json.dumps(data, indent=1))
    with pytest.raises(ImportFailure) as failure:
        study_archive_import(path=archive, owner=alice)
    assert failure.value.field == "$.participants[0].events[1].origin"
    assert "'robot' is not one of client, server" in failure.value.reason


def test_an_older_archive_without_origins_is_read_as_before(archive, alice):
    data = json.loads(archive.read_text())
    for participant in data["participants"]:
        for event in participant["events"]:
            del event["origin"]
    archive.write_text(json.dumps(data, indent=1))
    study = study_archive_import(path=archive, owner=alice)
    events = Event.objects.filter(participant__study=study)
    assert set(events.filter(type="session_start").values_list("origin", flat=True)) == {EventOrigin.SERVER}
    assert set(events.filter(type="query").values_list("origin", flat=True)) == {EventOrigin.CLIENT}


def test_an_imported_participant_s_quota_counts_their_client_data(archive, alice, worked_study):
    study = study_archive_import(path=archive, owner=alice)
    for original in worked_study.participants.all():
        copy = study.participants.get(code=original.code)
        expected = sum(
            len(json.dumps(data, separators=(",", ":")))
            for data in copy.events.filter(origin=EventOrigin.CLIENT).values_list("payload__data", flat=True)
        )
        assert copy.event_bytes == expected
    assert study.participants.filter(event_bytes__gt=0).exists()
