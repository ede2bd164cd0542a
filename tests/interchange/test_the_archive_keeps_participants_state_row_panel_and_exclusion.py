"""The archive carries each participant's state and its reason, plan row and re-issue, panel ids and status,
study clock and exclusion: export -> import -> export gives identical participant fields, and the
copy's participants.csv is the original's. A bad value is refused by file, line and field, importing
nothing."""

import json

import pytest

from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive, study_archive_import
from studies.interchange.tidy_csv import study_tables
from studies.models import Participant, Study
from tests.interchange.participants_helpers import study_with_varied_participants

pytestmark = pytest.mark.django_db

CARRIED = [
    "state",
    "state_changed_at",
    "state_reason",
    "started_at",
    "plan_row",
    "reissue_of",
    "panel_id",
    "panel_study_id",
    "panel_session_id",
    "panel_status",
    "panel_status_at",
    "excluded_at",
    "excluded_reason",
    "excluded_agreement",
    "excluded_manually",
]


def _participant_fields(archive):
    return [
        {k: v for k, v in p.items() if k not in {"assignments", "events"}} for p in archive["participants"]
    ]


def _exported(study, tmp_path):
    path = tmp_path / f"{study.slug}.json"
    path.write_text(json.dumps(study_archive(study=study, panel_ids=True)))
    return path


def test_participants_survive_the_round_trip_with_every_field(worked_study, alice, tmp_path):
    study_with_varied_participants(worked_study, alice)
    first = study_archive(study=worked_study, panel_ids=True)  # the owner's archive, asked with the ids
    by_code = {p["code"]: p for p in first["participants"]}
    assert set(CARRIED) <= set(by_code["P001"])
    assert (by_code["P001"]["state"], by_code["P001"]["excluded_manually"]) == ("completed", True)
    assert (by_code["P003"]["reissue_of"], by_code["P003"]["plan_row"]) == ("P002", 1)
    assert by_code["P001"]["panel_status"] == "approved" and by_code["P002"]["state"] == "withdrawn"
    copy = study_archive_import(path=_exported(worked_study, tmp_path), owner=alice, name="Copy")
    assert _participant_fields(study_archive(study=copy, panel_ids=True)) == _participant_fields(first)
    third = Participant.objects.get(study=copy, code="P003")
    assert third.reissue_of == Participant.objects.get(study=copy, code="P002")
    original, again = (
        study_tables(study=worked_study, panel_ids=True)["participants"],
        study_tables(study=copy, panel_ids=True)["participants"],
    )
    slug = original[0].index("study")
    assert [row[:slug] + row[slug + 1 :] for row in again] == [
        row[:slug] + row[slug + 1 :] for row in original
    ]


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("state", "gone", "'gone' is not one of invited, started"),
        ("plan_row", -1, "-1 is not a row of the plan"),
        ("reissue_of", "P404", "no other participant 'P404' in the archive"),
        ("reissue_of", "P001", "no other participant 'P001' in the archive"),
        ("excluded_manually", "yes", "'yes' is not of type bool"),
        ("panel_status", "x" * 21, "longer than 20 characters"),
        ("started_at", "yesterday", "'yesterday' is not an ISO 8601 date and time"),
    ],
)
def test_a_bad_participant_field_is_refused_by_line_and_field(
    worked_study, alice, tmp_path, field, value, reason
):
    archive = study_archive(study=worked_study)
    archive["participants"][0][field] = value
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(archive, indent=1))
    studies = Study.objects.count()
    with pytest.raises(ImportFailure) as caught:
        study_archive_import(path=path, owner=alice, name="Bad")
    assert caught.value.field == f"$.participants[0].{field}" and reason in caught.value.reason
    assert caught.value.line is not None and caught.value.line > 1
    assert Study.objects.count() == studies


def test_a_row_re_issued_twice_is_refused(worked_study, alice, tmp_path):
    archive = study_archive(study=worked_study)
    archive["participants"][0]["reissue_of"] = "P002"
    archive["participants"][1]["reissue_of"] = "P001"
    path = tmp_path / "fine.json"
    path.write_text(json.dumps(archive, indent=1))
    copy = study_archive_import(path=path, owner=alice, name="Swapped")  # each row re-issued once: accepted
    assert copy.participants.filter(reissue_of__isnull=False).count() == 2
    enrolled = worked_study.participants.count()
    archive["participants"].append({**archive["participants"][1], "code": "P009", "enrolment_index": 9})
    archive["participants"][-1]["reissue_of"] = "P001"
    path.write_text(json.dumps(archive, indent=1))
    with pytest.raises(ImportFailure) as caught:
        study_archive_import(path=path, owner=alice, name="Twice")
    assert caught.value.field == "$.participants[2].reissue_of" and "re-issued twice" in caught.value.reason
    assert worked_study.participants.count() == enrolled


def test_an_older_archive_without_the_fields_imports_everyone_invited_on_their_own_row(
    worked_study, alice, tmp_path
):
    archive = study_archive(study=worked_study, panel_ids=True)
    for participant in archive["participants"]:
        for field in CARRIED:
            participant.pop(field)
    path = tmp_path / "old.json"
    path.write_text(json.dumps(archive))
    copy = study_archive_import(path=path, owner=alice, name="Old")
    assert set(copy.participants.values_list("state", "plan_row", "reissue_of", "excluded_manually")) == {
        (None, None, None, False)
    }


def test_an_unknown_panel_is_refused_at_its_field(worked_study, alice, tmp_path):
    archive = study_archive(study=worked_study)
    archive["recruitment"] = {"panel": "mechanical-horse"}
    path = tmp_path / "panel.json"
    path.write_text(json.dumps(archive, indent=1))
    studies = Study.objects.count()
    with pytest.raises(ImportFailure) as caught:
        study_archive_import(path=path, owner=alice, name="Panel")
    assert (
        caught.value.field == "$.recruitment.panel"
        and "'mechanical-horse' is not one of" in caught.value.reason
    )
    assert Study.objects.count() == studies
