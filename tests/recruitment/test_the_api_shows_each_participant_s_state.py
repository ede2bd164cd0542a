"""The participants API carries each participant's state, plan row, the row they took over and the panel's
last word, read-only."""

import pytest

from studies.participation.recruitment.panel_status import panel_status_record
from tests.interchange.api_helpers import client_for

from .conftest import join

pytestmark = pytest.mark.django_db


def test_the_list_shows_states_and_re_issued_rows(alice, panel_study):
    left = join(panel_study).participant
    panel_status_record(study=panel_study, key="n1", panel_id=left.panel_id, status="returned")
    taker = join(panel_study).participant
    response = client_for(alice).get(f"/api/studies/{panel_study.pk}/participants/")
    assert response.status_code == 200
    rows = {row["code"]: row for row in response.json()["results"]}
    assert rows["P001"]["state"] == "invited" and rows["P001"]["plan_row"] == 0
    assert (rows[left.code]["state"], rows[left.code]["panel_status"]) == ("returned", "returned")
    assert rows[left.code]["state_reason"] == "panel: returned"
    assert (rows[taker.code]["plan_row"], rows[taker.code]["reissue_of"]) == (left.plan_row, left.pk)
