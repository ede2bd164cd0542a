"""A participant who left (returned, timed out or rejected on the panel) has their open session ended by the
server with end reason "left", on the panel's status and on the sweep; the tidy export shows it."""

import pytest

from studies.interchange.tidy_csv import TABLES, study_tables
from studies.models import Event, SearchSession
from studies.participation.recruitment.panel_status import panel_status_record
from studies.participation.recruitment.states import participant_state_set
from studies.participation.recruitment.sweep import study_sweep

from .conftest import join, start

pytestmark = pytest.mark.django_db


def open_session_of_a_joined(study):
    person = join(study).participant
    return person, start(person)


@pytest.mark.parametrize("status", ["returned", "timed_out", "rejected"])
def test_the_panel_s_status_ends_the_open_session(panel_study, status):
    person, session = open_session_of_a_joined(panel_study)
    panel_status_record(study=panel_study, key="n1", panel_id=person.panel_id, status=status)
    session.refresh_from_db()
    assert session.ended_at is not None and session.end_reason == "left"
    end = Event.objects.get(session=session, type="session_end")
    assert end.payload["data"] == {"reason": "left", "by": "panel", "panel_status": status}


def test_the_sweep_ends_the_open_session_of_one_who_left(panel_study):
    person, session = open_session_of_a_joined(panel_study)
    participant_state_set(participant=person, state="returned", reason="panel: returned")
    assert SearchSession.objects.get(pk=session.pk).ended_at is None
    assert study_sweep(study=panel_study).sessions_ended == 1
    assert SearchSession.objects.get(pk=session.pk).end_reason == "left"
    assert study_sweep(study=panel_study).sessions_ended == 0  # idempotent


def test_the_tidy_export_shows_the_end_reason(panel_study):
    person, session = open_session_of_a_joined(panel_study)
    panel_status_record(study=panel_study, key="n1", panel_id=person.panel_id, status="returned")
    rows = study_tables(study=panel_study)["sessions"]
    column = TABLES["sessions"].index("end_reason")
    assert [row[column] for row in rows[1:] if "left" in row] == ["left"]
