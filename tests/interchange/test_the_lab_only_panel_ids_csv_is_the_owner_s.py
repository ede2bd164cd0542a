"""/studies/<slug>/downloads/panel-ids.csv, for paying and reconciling on the panel: a row per participant who
came with a panel id (code, panel, ids, state, the panel's status, the completion code they were shown), for
the study's owner alone, linked from the downloads and recruitment pages with a line saying it is not for
sharing."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from studies.interchange.panel_ids import PANEL_ID_COLUMNS, panel_id_rows
from studies.models import CompletionCode, Participant, Recruitment, StudyAssessor
from tests.interchange.panel_ids_helpers import (
    ARRIVAL_IDS,
    FIRST_IDS,
    body_of,
    csv_rows,
    every_id,
    study_with_panel_arrivals,
)

pytestmark = pytest.mark.django_db


def _url(study):
    return f"/studies/{study.slug}/downloads/panel-ids.csv"


def test_the_owner_gets_a_row_per_panel_participant_with_their_codes(worked_study, alice, client):
    study_with_panel_arrivals(worked_study, alice)
    recruitment = Recruitment.objects.get(study=worked_study)
    client.force_login(alice)
    response = client.get(_url(worked_study))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"] == f'attachment; filename="{worked_study.slug}-panel-ids.csv"'
    assert response["Cache-Control"] == "no-store"
    text = body_of(response).decode()
    assert text.splitlines()[0].split(",") == PANEL_ID_COLUMNS
    rows = csv_rows(text)
    assert [row["participant"] for row in rows] == ["P001", "P004"]  # P002 and P003 came with no id
    first, arrival = rows
    assert (first["panel"], first["panel_id"], first["panel_study_id"], first["panel_session_id"]) == (
        "prolific",
        *FIRST_IDS,
    )
    assert (first["state"], first["panel_status"], first["completion_code"]) == (
        "completed",
        "approved",
        recruitment.code_completed,
    )
    assert first["panel_status_at"] != ""
    assert tuple(arrival[c] for c in ("panel_id", "panel_study_id", "panel_session_id")) == ARRIVAL_IDS
    assert (arrival["state"], arrival["panel_status"], arrival["completion_code"]) == (
        "screened_out",
        "",
        recruitment.code_failed_checks,
    )


def test_a_completer_s_own_code_is_given_and_none_before_it_is_handed_out(worked_study, alice):
    study_with_panel_arrivals(worked_study, alice)
    Recruitment.objects.filter(study=worked_study).update(code_mode="per_participant")
    first = Participant.objects.get(study=worked_study, code="P001")
    assert [row[-1] for row in panel_id_rows(study=worked_study)][1] == ""  # not handed out yet: no write
    assert not CompletionCode.objects.filter(participant=first).exists()
    CompletionCode.objects.create(
        study=worked_study,
        code="OWNCODE123",
        participant=first,
        source="generated",
        handed_out_at=first.created_at,
    )
    rows = list(panel_id_rows(study=worked_study))
    assert [row[-1] for row in rows[1:]] == [
        "OWNCODE123",
        Recruitment.objects.get(study=worked_study).code_failed_checks,
    ]


def test_the_rows_are_read_a_round_at_a_time(worked_study, alice):
    study_with_panel_arrivals(worked_study, alice)
    for chunk_size, rounds in ((1, 2), (500, 1)):
        with CaptureQueriesContext(connection) as queries:
            rows = list(panel_id_rows(study=worked_study, chunk_size=chunk_size))
        assert len(rows) == 3
        # The recruitment, the participants' keys, then per round the participants and their codes.
        assert len(queries) == 2 + 2 * rounds, [q["sql"] for q in queries.captured_queries]


def test_a_co_researcher_is_refused_with_the_reason(worked_study, alice, bob, client):
    study_with_panel_arrivals(worked_study, alice)
    client.force_login(bob)
    response = client.get(_url(worked_study))
    assert response.status_code == 403
    text = response.content.decode()
    assert "only the study's owner" in text and [found for found in every_id() if found in text] == []


def test_anyone_else_gets_nothing(worked_study, alice, charlie, django_user_model, client):
    study_with_panel_arrivals(worked_study, alice)
    response = client.get(_url(worked_study))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client.force_login(charlie)  # another lab's researcher: the study is not theirs to know of
    assert client.get(_url(worked_study)).status_code == 404
    ann = django_user_model.objects.create_user("ann", password="ann-password")
    StudyAssessor.objects.create(study=worked_study, user=ann, invited_by=alice)
    client.force_login(ann)
    assert client.get(_url(worked_study)).status_code == 403


@pytest.mark.parametrize("page", ["downloads/", "recruitment/"])
def test_the_owner_s_pages_link_it_as_not_for_sharing(worked_study, alice, bob, client, page):
    study_with_panel_arrivals(worked_study, alice)
    client.force_login(alice)
    html = client.get(f"/studies/{worked_study.slug}/{page}").content.decode()
    assert f'href="{_url(worked_study)}"' in html and "not for sharing" in html.lower()
    client.force_login(bob)
    html = client.get(f"/studies/{worked_study.slug}/{page}").content.decode()
    assert _url(worked_study) not in html and "owner alone" in html
