"""A scoring run's read paths follow the analysis population: the API's list of a run's session
scores and its bulk query scores hold the study's default population's sessions, or the one asked for; a bad
one is a 400 naming it.
The run itself scores every finished session, so switching populations needs no re-scoring."""

import pytest

from studies.models import ParticipantState
from studies.participation.recruitment.states import participant_state_set
from tests.interchange.api_helpers import client_for

pytestmark = pytest.mark.django_db


def test_the_api_lists_the_populations_sessions(scored):
    built, run = scored
    study = built.study
    for participant in study.participants.all():
        state = ParticipantState.WITHDRAWN if participant.code == "P008" else ParticipantState.COMPLETED
        participant_state_set(participant=participant, state=state)
    api = client_for(study.owner)
    url = f"/api/studies/{study.pk}/scoring-runs/{run.pk}/sessions/"

    def listed(**query):
        response = api.get(url, {"page_size": 100, **query})
        assert response.status_code == 200, response.content
        return {row["participant"] for row in response.json()["results"]}, response.json()["count"]

    assert listed() == ({f"P00{i}" for i in range(1, 9)}, 32)  # the default: itt:excluded, nobody marked
    assert listed(population="completers")[1] == 28 and "P008" not in listed(population="completers")[0]
    assert listed(population="itt", leave_out="withdrawn")[1] == 28
    study.analysis_population = "completers"
    study.save(update_fields=["analysis_population"])
    assert listed()[1] == 28
    assert listed(population="itt")[1] == 32
    bad = api.get(url, {"population": "most"})
    assert bad.status_code == 400 and "most" in bad.json()["population"]
    bad = api.get(url, {"leave_out": "tall"})
    assert bad.status_code == 400 and "tall" in bad.json()["leave_out"]

    # The bulk query scores too.
    bulk = f"/api/studies/{study.pk}/scoring-runs/{run.pk}/query-scores/"
    rows = api.get(bulk, {"page_size": 5000}).json()["results"]
    assert rows and "P008" not in {row["participant"] for row in rows}  # the default: completers now
    rows = api.get(bulk, {"page_size": 5000, "population": "itt"}).json()["results"]
    assert "P008" in {row["participant"] for row in rows}
    assert api.get(bulk, {"population": "most"}).status_code == 400
