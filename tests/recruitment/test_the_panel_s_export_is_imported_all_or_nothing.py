"""The panel's submissions export (Prolific's CSV, MTurk's batch results, a generic participant_id,status
file) updates the same states as the notifications; a file with any bad row imports nothing and names each
line and field; importing it again changes nothing. The reconciliation lists every disagreement left."""

from datetime import timedelta

import pytest
from django.utils import timezone

from studies.errors import RecruitmentError
from studies.models import PanelNotification, Participant
from studies.participation.recruitment.panel_reconciliation import reconciliation
from studies.participation.recruitment.panel_status import panel_export_import
from studies.participation.recruitment.states import participant_state_set, participant_state_sync

from .conftest import finish, join

pytestmark = pytest.mark.django_db

PROLIFIC_HEADER = "Submission id,Participant id,Status,Started at,Completed at\n"


def completed(study):
    participant = finish(join(study).participant)
    participant_state_sync(participant=Participant.objects.get(pk=participant.pk))
    return Participant.objects.get(pk=participant.pk)


def test_a_prolific_export_updates_the_states(panel_study):
    done, gone = completed(panel_study), join(panel_study).participant
    # After the study was made, and not ahead of the server's clock by more than the window.
    started, ended = ((timezone.now() + timedelta(seconds=s)).strftime("%Y-%m-%d %H:%M:%S") for s in (1, 60))
    text = PROLIFIC_HEADER + (
        f"s1,{done.panel_id},APPROVED,{started},{ended}\ns2,{gone.panel_id},RETURNED,{started},\n"
    )
    result = panel_export_import(study=panel_study, text=text)
    assert (result.rows, result.applied, result.replayed) == (2, 2, 0)
    done.refresh_from_db()
    gone.refresh_from_db()
    assert (done.state, done.panel_status) == ("completed", "approved")
    assert (gone.state, gone.panel_status) == ("returned", "returned")
    assert reconciliation(study=panel_study) == []


def test_importing_the_same_export_twice_changes_nothing(panel_study):
    gone = join(panel_study).participant
    text = PROLIFIC_HEADER + f"s2,{gone.panel_id},TIMED-OUT,,\n"
    panel_export_import(study=panel_study, text=text)
    again = panel_export_import(study=panel_study, text=text)
    assert (again.applied, again.replayed) == (0, 1)
    assert PanelNotification.objects.count() == 1


def test_an_mturk_batch_file_is_read_too(panel_study):
    done = completed(panel_study)
    text = f"HITId,AssignmentId,WorkerId,AssignmentStatus,SubmitTime\nH1,A1,{done.panel_id},Rejected,\n"
    panel_export_import(study=panel_study, text=text)
    done.refresh_from_db()
    assert done.panel_status == "rejected"
    [row] = reconciliation(study=panel_study)
    assert row.reason == "completed here, rejected on the panel"


def test_one_bad_row_imports_nothing_and_every_error_names_its_line_and_field(panel_study):
    gone = join(panel_study).participant
    text = PROLIFIC_HEADER + (
        f"s1,{gone.panel_id},RETURNED,,\n"
        "s2,../../x,APPROVED,,\n"
        f"s3,{gone.panel_id},PAID,,\n"
        f"s4,{gone.panel_id},APPROVED,,not a date\n"
        "s5,too,few\n"
    )
    with pytest.raises(RecruitmentError) as refused:
        panel_export_import(study=panel_study, text=text)
    assert refused.value.errors == [
        "line 3, participant id: not a participant id",
        "line 4, status: unknown status 'PAID'",
        "line 5, completed at: not a date and time",
        "line 6: 3 fields, the header has 5",
    ]
    gone.refresh_from_db()
    assert gone.state == "started" and not PanelNotification.objects.exists()


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "the file is empty"),
        ("a,b\n1,2\n", "line 1: no participant id and no status column"),
        ("pid,status\nx\x00,approved\n", "NUL"),
        ('pid,status\n"unterminated,approved\n', "line"),
    ],
)
def test_a_file_that_is_not_an_export_is_refused_plainly(panel_study, text, message):
    with pytest.raises(RecruitmentError, match=message):
        panel_export_import(study=panel_study, text=text)


def test_the_reconciliation_shows_each_disagreement_with_its_reason(panel_study):
    done, timed, silent = completed(panel_study), join(panel_study).participant, join(panel_study).participant
    participant_state_set(participant=timed, state="timed_out", reason="study limit")
    text = PROLIFIC_HEADER + (
        f"s1,{done.panel_id},RETURNED,,\n"
        f"s2,{timed.panel_id},APPROVED,,\n"
        "s3,5f5f5f5f5f5f5f5f5f5f5f5f,AWAITING REVIEW,,\n"
    )
    panel_export_import(study=panel_study, text=text)
    rows = {row.panel_id: row for row in reconciliation(study=panel_study)}
    assert set(rows) == {done.panel_id, timed.panel_id, silent.panel_id, "5f5f5f5f5f5f5f5f5f5f5f5f"}
    assert "intention to treat" in rows[done.panel_id].reason
    assert rows[timed.panel_id].reason.startswith("the panel has a submission, ours is timed_out")
    assert rows[silent.panel_id].reason.startswith("not in the panel's export")
    assert rows["5f5f5f5f5f5f5f5f5f5f5f5f"].participant_code is None
