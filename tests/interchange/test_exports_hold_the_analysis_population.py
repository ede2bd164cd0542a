"""The exports hold the analysis population: the tidy CSV tables and the TREC runs, from the
downloads page, the API and the command, take a population parameter, default to the study's, and carry
population.txt saying which population they hold, how many participants are in it and who was left out; a
population naming nothing is refused before the first byte."""

import csv
import io
import zipfile

import pytest
from django.core.management import CommandError, call_command

from studies.models import ParticipantState
from studies.participation.recruitment.states import participant_state_set
from tests.dashboards.conftest import (  # noqa: F401  (fixtures)
    _fresh_chart_cache,
    collection_docs,
    constructed,
)
from tests.interchange.api_helpers import client_for

pytestmark = pytest.mark.django_db

DROPOUT = "P008"


@pytest.fixture
def states(constructed):  # noqa: F811
    """32 sessions of 8 participants: P008 timed out after their four sessions, the others completed."""
    for participant in constructed.study.participants.all():
        state = ParticipantState.TIMED_OUT if participant.code == DROPOUT else ParticipantState.COMPLETED
        participant_state_set(participant=participant, state=state)
    return constructed.study


def _zip(response) -> zipfile.ZipFile:
    assert response.status_code == 200, response.content[:300] if not response.streaming else ""
    return zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))


def _sessions(zipped) -> list[dict]:
    return list(csv.DictReader(io.StringIO(zipped.read("sessions.csv").decode())))


def test_the_tables_default_to_the_studys_population_and_say_so(client, states):
    study = states
    client.force_login(study.owner)
    url = f"/studies/{study.slug}/downloads/tables.zip"
    everyone = _zip(client.get(url))
    assert len(_sessions(everyone)) == 32
    note = everyone.read("population.txt").decode()
    assert "population=itt:excluded" in note and "The study's default population." in note
    assert "Participants: 8 of the 8 enrolled." in note and "Left out: none." in note

    completers = _zip(client.get(url, {"population": "completers"}))
    rows = _sessions(completers)
    assert len(rows) == 28 and DROPOUT not in {row["participant"] for row in rows}
    note = completers.read("population.txt").decode()
    assert "population=completers" in note and "Not the study's default (itt:excluded)." in note
    assert "Participants: 7 of the 8 enrolled." in note and f"Left out: {DROPOUT}." in note
    queries = list(csv.DictReader(io.StringIO(completers.read("queries.csv").decode())))
    assert queries and DROPOUT not in {row["participant"] for row in queries}

    study.analysis_population = "itt:timed_out"
    study.save(update_fields=["analysis_population"])
    default = _zip(client.get(url))
    assert len(_sessions(default)) == 28
    assert "population=itt:timed_out" in default.read("population.txt").decode()
    page = client.get(f"/studies/{study.slug}/downloads/").content.decode()
    assert "7 of the 8 enrolled participants (left out: P008)" in page


def test_the_runs_hold_the_population_asked_for(client, states):
    study = states
    client.force_login(study.owner)
    url = f"/studies/{study.slug}/downloads/runs-session.zip"
    every = [n for n in _zip(client.get(url, {"population": "itt"})).namelist() if n.endswith(".run")]
    assert len(every) == 32 and any(name.startswith(f"{DROPOUT}_") for name in every)
    completers = _zip(client.get(url, {"population": "completers"}))
    runs = [n for n in completers.namelist() if n.endswith(".run")]
    assert len(runs) == 28 and not any(name.startswith(f"{DROPOUT}_") for name in runs)
    assert "population=completers" in completers.read("population.txt").decode()


def test_the_api_takes_the_population_and_refuses_a_bad_one_by_name(states):
    study = states
    api = client_for(study.owner)
    zipped = _zip(api.get(f"/api/studies/{study.pk}/tables/?population=itt&leave_out=timed_out"))
    assert len(_sessions(zipped)) == 28
    assert "population=itt:timed_out" in zipped.read("population.txt").decode()
    runs = _zip(api.get(f"/api/studies/{study.pk}/runs/?unit=session&population=completers"))
    assert len([n for n in runs.namelist() if n.endswith(".run")]) == 28
    bad = api.get(f"/api/studies/{study.pk}/tables/?population=everyone")
    assert bad.status_code == 400 and "everyone" in bad.json()["population"]
    bad = api.get(f"/api/studies/{study.pk}/runs/?leave_out=tall")
    assert bad.status_code == 400 and "tall" in bad.json()["leave_out"]


def test_the_page_refuses_a_bad_population_before_any_byte(client, states):
    client.force_login(states.owner)
    response = client.get(f"/studies/{states.slug}/downloads/tables.zip", {"population": "itt:tall"})
    assert response.status_code == 400 and not response.streaming
    assert "leave_out: 'tall'" in response.content.decode()


def test_the_command_writes_the_population_and_its_note(states, tmp_path):
    call_command("export_csv", states.slug, "-o", str(tmp_path), "--population", "completers")
    with open(tmp_path / "sessions.csv", encoding="utf-8") as handle:
        assert len(list(csv.DictReader(handle))) == 28
    assert "population=completers" in (tmp_path / "population.txt").read_text()
    with pytest.raises(CommandError, match="--population: population: 'some'"):
        call_command("export_csv", states.slug, "-o", str(tmp_path / "x"), "--population", "some")
