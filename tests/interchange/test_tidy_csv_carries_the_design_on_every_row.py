"""Tidy CSV: one file per level, the design on every row, pseudonymous codes only."""

import csv

import pytest
from django.core.management import call_command

from studies.interchange.tidy_csv import DESIGN, TABLES, table_header

pytestmark = pytest.mark.django_db


def read(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_each_level_has_its_file_and_columns(worked_study, tmp_path):
    call_command("export_csv", worked_study.slug, "-o", str(tmp_path))
    tables = {name: read(tmp_path / f"{name}.csv") for name in TABLES}
    for name, rows in tables.items():
        with open(tmp_path / f"{name}.csv", encoding="utf-8") as handle:
            # The fixed columns, then (sessions.csv) one per item of the questions around each task.
            assert handle.readline().strip().split(",") == table_header(study=worked_study, name=name)
        for row in rows:
            assert all(row[column] != "" for column in DESIGN), (name, row)
            assert row["participant"] == "P001" and row["study"] == worked_study.slug
    assert len(tables["sessions"]) == 2 and len(tables["queries"]) == 4
    assert len(tables["shown_results"]) == 16 and len(tables["judgments"]) == 4
    first = worked_study.participants.get(code="P001").assignments.get(position=1)
    session_row = tables["sessions"][0]
    assert (
        session_row["position"],
        session_row["scenario"],
        session_row["system"],
        session_row["topic"],
    ) == ("1", first.scenario.code, first.system.code, first.scenario.topic_id)
    assert session_row["queries"] == "2" and session_row["documents_opened"] == "2"
    assert session_row["duration_s"] == "300.000"
    opened = [r for r in tables["shown_results"] if r["opened"] == "1"]
    assert len(opened) == 4 and all(r["rank"] == "2" for r in opened)
    assert {r["changes"] for r in tables["judgments"]} == {"0", "1"}


def test_no_tokens_ids_or_account_names_are_written(worked_study, tmp_path):
    call_command("export_csv", worked_study.slug, "-o", str(tmp_path))
    text = "".join((tmp_path / f"{name}.csv").read_text() for name in TABLES)
    for participant in worked_study.participants.all():
        assert participant.access_token not in text
    cells = {cell for name in TABLES for row in read(tmp_path / f"{name}.csv") for cell in row.values()}
    assert "alice" not in cells and worked_study.owner.username not in cells
    for rows in TABLES.values():
        assert "id" not in rows and "session_id" not in rows
