"""The archive's import reads back the one meant to be shared (no panel ids) and the owner's (asked with
them): each copy's participants are the original's, with or without their ids, and export again the same."""

import json

import pytest
from django.core.management import call_command

from studies.interchange.archive import study_archive
from studies.interchange.panel_ids import panel_id_rows
from studies.models import Participant, Study
from tests.interchange.panel_ids_helpers import ARRIVAL_IDS, PANEL_ID_COLUMNS, study_with_panel_arrivals

pytestmark = pytest.mark.django_db


def _participants(archive):
    return [
        {k: v for k, v in p.items() if k not in {"assignments", "events"}} for p in archive["participants"]
    ]


def _import(tmp_path, flags=()):
    path = tmp_path / "study.json"
    call_command("export_study", "alices-study", "-o", str(path), *flags)
    call_command("import_study", str(path), "--owner", "alice", "--name", f"Copy {len(flags)}")
    return json.loads(path.read_text()), Study.objects.get(name=f"Copy {len(flags)}")


@pytest.fixture
def panel_study(worked_study, alice):
    worked_study.slug = "alices-study"
    worked_study.save(update_fields=["slug"])
    study_with_panel_arrivals(worked_study, alice)
    return worked_study


def test_the_shared_archive_imports_every_participant_without_their_ids(panel_study, tmp_path):
    shared, copy = _import(tmp_path)
    assert all(not set(PANEL_ID_COLUMNS) & set(p) for p in shared["participants"])
    assert _participants(study_archive(study=copy)) == _participants(shared)
    assert copy.participants.count() == panel_study.participants.filter(preview_at__isnull=True).count()
    assert not Participant.objects.filter(study=copy, panel_id__isnull=False).exists()
    arrival = Participant.objects.get(study=copy, code="P004")
    assert (arrival.state, arrival.state_reason) == ("screened_out", "failed checks: attention_1")
    assert list(panel_id_rows(study=copy))[1:] == []


def test_the_owner_s_archive_imports_the_ids_too(panel_study, tmp_path):
    owned, copy = _import(tmp_path, ["--include-panel-ids"])
    assert _participants(study_archive(study=copy, panel_ids=True)) == _participants(owned)
    arrival = Participant.objects.get(study=copy, code="P004")
    assert (arrival.panel_id, arrival.panel_study_id, arrival.panel_session_id) == ARRIVAL_IDS
    assert [row[0] for row in list(panel_id_rows(study=copy))[1:]] == ["P001", "P004"]
