"""Reconciliation checks the codes the panel's workers typed: each is the worker's own (right), another
participant's, the study's shared code where each has their own, unknown, or missing (completed here, no
code); a worker id of no participant is named. A bad upload is refused per line and field and matches
nothing. A participant below the effort rules with the "flagged" outcome keeps the completed code and shows
on the reconciliation page and in sessions.csv."""

import html

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from studies.errors import RecruitmentError
from studies.interchange.tidy_csv import study_tables
from studies.models import CompletionCode, Recruitment
from studies.participation.recruitment.codes import typed_codes_match
from studies.participation.recruitment.completion import completion_of
from studies.participation.recruitment.panel_reconciliation import flagged_participants
from studies.participation.recruitment.panels import recruitment_update
from studies.participation.recruitment.states import participant_visit

from .conftest import finish, join

pytestmark = pytest.mark.django_db


@pytest.fixture
def coded_study(panel_study):
    """A generic pool's study with a code per participant: w-1, w-2, w-3 completed; w-4 still working."""
    recruitment_update(study=panel_study, panel="generic", code_mode="per_participant")
    for pid in ("w-1", "w-2", "w-3"):
        person = finish(join(panel_study, pid).participant)
        participant_visit(participant=person)
        completion_of(person)  # their last page: the code handed out
    join(panel_study, "w-4")
    return panel_study


def own(pid):
    return CompletionCode.objects.get(participant__panel_id=pid).code


def test_each_typed_code_is_matched(coded_study):
    shared = Recruitment.objects.get(study=coded_study).code_completed
    text = (
        f"workerId,code\nw-1,{own('w-1')}\nw-2,{own('w-1')}\nw-4,NOSUCHCODE\nw-9,{own('w-3')}\nw-3,{shared}\n"
    )
    rows = typed_codes_match(study=coded_study, text=text)
    found = {(row.panel_id, row.match) for row in rows}
    assert found == {
        ("w-1", "right"),
        ("w-2", "other_participant"),
        ("w-4", "unknown"),
        ("w-9", "no_participant"),
        ("w-3", "study_code"),
    }
    by_id = {row.panel_id: row for row in rows}
    assert by_id["w-2"].reason == "the code of w-1, not theirs" and by_id["w-1"].line == 2
    # w-2 typed nothing of their own; a completer left out of the file is missing.
    rows = typed_codes_match(study=coded_study, text=f"w-1,{own('w-1')}\nw-2,\n")
    assert {(row.panel_id, row.match) for row in rows} == {
        ("w-1", "right"),
        ("w-2", "missing"),
        ("w-3", "missing"),
    }


def test_one_study_code_is_right_for_every_completer(panel_study):
    recruitment_update(study=panel_study, panel="generic")
    person = finish(join(panel_study, "w-1").participant)
    participant_visit(participant=person)
    found = Recruitment.objects.get(study=panel_study)
    rows = typed_codes_match(study=panel_study, text=f"w-1,{found.code_completed}")
    assert [(r.match, r.reason) for r in rows] == [("right", "the study's completed code")]
    rows = typed_codes_match(study=panel_study, text=f"w-1,{found.code_failed_checks}")
    assert rows[0].match == "study_code" and "they are completed here" in rows[0].reason


def test_a_bad_upload_is_refused_per_line_and_field(coded_study):
    text = "w-1,GOOD\nw 2,CODE\nw-3,A,B\nw-1,AGAIN\nw-5,bad code\n"
    with pytest.raises(RecruitmentError) as refused:
        typed_codes_match(study=coded_study, text=text)
    assert refused.value.errors == [
        "line 2, worker id: 1..64 letters, digits or _.:- ('w 2')",
        "line 3: two columns, the worker id and the code (3 found)",
        "line 4, worker id: w-1 again (line 1)",
        "line 5, code: 1..40 letters, digits, _ or - ('bad code')",
    ]


def page_body(response, study) -> str:
    """The page after its <title>, which must be the title alone: a block left open once put the whole
    typed-codes and flags sections inside the title, where a plain `in page` still found them."""
    page = response.content.decode()
    title, body = page.split("<title>", 1)[1].split("</title>", 1)
    assert html.unescape(title.strip()) == f"Reconciliation · {study.name} · SessionLab"
    return body


def test_the_page_matches_an_upload_and_lists_a_bad_one(client, alice, coded_study):
    client.force_login(alice)
    url = f"/studies/{coded_study.slug}/recruitment/typed-codes/"
    upload = SimpleUploadedFile("codes.csv", f"w-1,{own('w-1')}\nw-2,{own('w-1')}\n".encode())
    page = page_body(client.post(url, {"codes": upload}), coded_study)
    assert 'class="typed-right"' in page and 'class="typed-other_participant"' in page
    assert "the code of w-1, not theirs" in page and 'class="typed-missing"' in page  # w-3
    pasted = client.post(url, {"codes_text": "w-1,x y"}, follow=True).content.decode()
    assert "Nothing matched." in pasted and "line 1, code" in pasted and 'id="typed-codes"' not in pasted


def test_a_flagged_participant_keeps_the_code_and_shows_in_reconciliation_and_the_export(
    client, alice, panel_study
):
    recruitment_update(study=panel_study, effort_preset="light", effort_outcome="flagged")
    person = finish(join(panel_study).participant)  # every task ended at once, no query
    assert participant_visit(participant=person) == "completed"
    assert completion_of(person).code == Recruitment.objects.get(study=panel_study).code_completed

    flagged = flagged_participants(study=panel_study)
    assert [row.participant_code for row in flagged] == [person.code]
    assert flagged[0].codes == ("no_queries", "speeder", "below_rules")
    client.force_login(alice)
    page = page_body(client.get(f"/studies/{panel_study.slug}/recruitment/reconciliation/"), panel_study)
    assert person.code in page and "no_queries, speeder, below_rules" in page
    assert "task 1: 0 queries &lt; 1" in page

    header, *rows = study_tables(study=panel_study)["sessions"]
    mine = [dict(zip(header, row, strict=True)) for row in rows if row[1] == person.code]
    assert len(mine) == 4
    assert all(row["effort_flags"] == "no_queries;speeder;below_rules" for row in mine)
    assert mine[0]["effort_reasons"].startswith("no queries; ended ")
    assert "0 queries < 1" in mine[0]["effort_reasons"]
