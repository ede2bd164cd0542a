"""The resume rule holds for every panel's parameter names: Prolific's PROLIFIC_PID, MTurk's
workerId (with its assignment and HIT) and a generic pool's pid. The browser that arrived first resumes; a
fresh client with the same id gets the refusal page and no token."""

import pytest
from django.test import Client

from studies.models import Participant, Recruitment

from .conftest import prolific_pid

pytestmark = pytest.mark.django_db

PANELS = {
    "prolific": lambda: {"PROLIFIC_PID": prolific_pid(), "STUDY_ID": "S1", "SESSION_ID": "X1"},
    "mturk": lambda: {"workerId": "A1B2C3D4E5", "assignmentId": "3ABC", "hitId": "H1"},
    "generic": lambda: {"pid": "pool-0007"},
}


@pytest.mark.parametrize("panel", sorted(PANELS))
def test_a_panel_s_link_resumes_in_the_first_browser_and_no_other(panel_study, panel):
    found = Recruitment.objects.get(study=panel_study)
    found.panel = panel
    found.save(update_fields=["panel"])
    path, query = f"/join/{found.public_token}/", PANELS[panel]()
    first = Client()
    arrival = first.get(path, query)
    assert arrival.status_code == 302
    participant = Participant.objects.get(study=panel_study, panel_id__iexact=next(iter(query.values())))
    assert arrival.url.endswith(f"/p/{participant.access_token}/")
    assert first.get(path, query).url == arrival.url

    stranger = Client().get(path, query)
    assert stranger.status_code == 409
    assert participant.access_token not in stranger.content.decode()
    assert "browser you started in" in stranger.content.decode()
