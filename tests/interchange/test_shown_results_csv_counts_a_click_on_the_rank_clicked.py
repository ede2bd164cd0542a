"""shown_results.csv has one row per shown position; an open counts on the row of the rank that was clicked,
not on every row of a document the list showed twice (2012 session 39, query 2: ranks 11 and 12 are one
document, clicked at 11)."""

import csv
import io

import pytest

from studies.interchange.session_track import session_track_import
from studies.interchange.tidy_csv import study_tables, table_csv
from studies.models import Event, ShownResult

pytestmark = pytest.mark.django_db


def rows(study, participant, query, position=1):
    """The shown_results.csv rows of one query of the participant's session at `position`, by rank."""
    table = list(csv.DictReader(io.StringIO(table_csv(study_tables(study=study)["shown_results"]))))
    return {
        int(r["rank"]): r
        for r in table
        if (r["participant"], r["position"], r["query"]) == (participant, str(position), str(query))
    }


@pytest.mark.needs_data
def test_a_click_on_the_first_of_two_showings_counts_once(alice, session_track_2012):
    study = session_track_import(
        path=session_track_2012 / "sessiontrack2012.xml", owner=alice, name="2012"
    ).study
    shown = rows(study, "ST039", 2)
    assert shown[11]["doc"] == shown[12]["doc"] == "clueweb09-en0042-55-10584"
    assert (shown[11]["opened"], shown[12]["opened"]) == ("1", "0")
    assert sum(int(r["opened"]) for r in shown.values()) == 1


def test_an_open_counts_on_its_rank_or_the_first_showing_without_one(worked_study):
    session = worked_study.participants.get(code="P001").assignments.get(position=1).session
    query = session.queries.get(position=1)
    clicked = query.shown_results.get(rank=2)
    ShownResult.objects.filter(query=query, rank=4).update(document=clicked.document)  # shown at 2 and 4
    assert rows(worked_study, "P001", 1)[2]["opened"] == "1"
    assert rows(worked_study, "P001", 1)[4]["opened"] == "0"
    doc = clicked.document.external_id
    for cid, data in (
        ("again.4", {"doc": doc, "query": 1, "rank": 4}),
        ("again.none", {"doc": doc, "query": 1}),
    ):
        Event.objects.create(
            participant=session.assignment.participant,
            session=session,
            type="document_open",
            client_event_id=cid,
            payload={"data": data, "ack": {"ok": True, "doc": doc}},
        )
    # The open at rank 4 counts there; the one naming no rank counts on the first showing (rank 2).
    shown = rows(worked_study, "P001", 1)
    assert (shown[2]["opened"], shown[4]["opened"]) == ("2", "1")
