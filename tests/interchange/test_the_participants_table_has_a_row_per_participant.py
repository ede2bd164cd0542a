"""participants.csv: one row per participant with their state and its reason, Latin-square row, re-issue,
panel, times, exclusion and pre-study answers one column per item; previews left out; in the
study page's zip and in `export_csv`."""

import csv
import io
import zipfile

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from studies.design import services
from studies.interchange.participants_table import PARTICIPANT_COLUMNS, participant_rows
from studies.interchange.tidy_csv import TABLE_NAMES, study_tables
from tests.interchange.participants_helpers import study_with_varied_participants

pytestmark = pytest.mark.django_db


def _by_code(rows):
    header, *body = rows
    return header, {row[header.index("participant")]: dict(zip(header, row, strict=True)) for row in body}


def test_each_participant_has_one_row_with_state_row_panel_exclusion_and_answers(worked_study, alice):
    first, second, third = study_with_varied_participants(worked_study, alice)
    # Asked with the panel ids (the owner's, by name): every column of the table.
    header, rows = _by_code(study_tables(study=worked_study, panel_ids=True)["participants"])
    assert header == PARTICIPANT_COLUMNS + ["age", "gender", "answer_state", "hobbies"]
    assert sorted(rows) == ["P001", "P002", "P003"]  # the preview is not written
    p1, p2, p3 = rows["P001"], rows["P002"], rows["P003"]
    assert (p1["state"], p1["state_reason"], p1["state_changed_at"]) == (
        "completed",
        "all tasks done",
        first.state_changed_at.isoformat(),
    )
    assert (
        p1["ended_at"] == first.state_changed_at.isoformat()
        and p1["started_at"] == first.started_at.isoformat()
    )
    assert (p1["sessions"], p1["sessions_ended"]) == (2, 2)
    assert (p1["panel"], p1["panel_id"], p1["panel_study_id"], p1["panel_session_id"]) == (
        "prolific",
        first.panel_id,
        "study-1",
        "session-1",
    )
    assert (p1["panel_status"], p1["panel_status_at"]) == ("approved", first.panel_status_at.isoformat())
    assert (p1["excluded"], p1["excluded_by"], p1["excluded_reason"]) == (
        1,
        "manual",
        "excluded by alice: answered at random",
    )
    assert (p1["age"], p1["gender"], p1["answer_state"], p1["hobbies"]) == (
        34,
        "woman",
        "calm",
        '["chess","go"]',
    )
    assert (p1["consent_version"], p1["consented_at"]) == ("1", first.consented_at.isoformat())
    assert (p2["state"], p2["state_reason"], p2["withdrawn_at"]) == (
        "withdrawn",
        "asked to stop",
        second.withdrawn_at.isoformat(),
    )
    assert (p2["excluded"], p2["excluded_by"], p2["panel"], p2["age"], p2["sessions"]) == (0, "", "", "", 0)
    assert (p3["state"], p3["enrolment_index"], p3["plan_row"], p3["reissue_of"]) == ("invited", 2, 1, "P002")
    assert (p3["ended_at"], p3["started_at"], p2["reissue_of"], p2["plan_row"]) == ("", "", "", 1)
    assert third.reissue_of_id == second.pk


def test_the_study_page_zip_and_the_command_write_participants_csv_first(
    worked_study, alice, client, tmp_path
):
    study_with_varied_participants(worked_study, alice)
    client.force_login(alice)
    response = client.get(f"/studies/{worked_study.slug}/downloads/tables.zip")
    assert response.status_code == 200
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as zipped:
        assert zipped.namelist() == [f"{name}.csv" for name in TABLE_NAMES] + ["population.txt"]
        assert zipped.namelist()[0] == "participants.csv"
        text = zipped.read("participants.csv").decode()
    read = list(csv.DictReader(io.StringIO(text)))
    assert [row["participant"] for row in read] == ["P001", "P002", "P003"]
    assert read[2]["reissue_of"] == "P002" and read[0]["excluded_by"] == "manual"
    call_command("export_csv", worked_study.slug, "-o", str(tmp_path))
    assert (tmp_path / "participants.csv").read_text() == text


def test_the_table_reads_a_query_per_round_of_participants_whatever_their_number(worked_study, alice):
    study_with_varied_participants(worked_study, alice)
    services.participants_enrol(study=worked_study, count=5)  # 8 participants written, a preview left out
    for chunk_size, rounds in ((1, 8), (3, 3), (500, 1)):
        with CaptureQueriesContext(connection) as queries:
            rows = list(participant_rows(study=worked_study, chunk_size=chunk_size))
        assert len(rows) == 1 + 8
        # The answer names, the panel, the participants' keys, then one query per round.
        assert len(queries) == 3 + rounds, (chunk_size, [q["sql"] for q in queries.captured_queries])
