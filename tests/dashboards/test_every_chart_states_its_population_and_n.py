"""The analysis population on every chart: a dropout's finished sessions count under intention to
treat and not under completers only; every chart of the registry changes its n with them, states the
population in its notes, its subtitle and its CSV; the study's default applies when the query names none; a
leave-out by state or check does what its name says; a cached chart follows a participant's new state."""

import csv
import io
import json

import pytest
from django.urls import reverse

from scoring.dashboards.registry import CHARTS
from studies.models import ParticipantState, SearchSession
from studies.participation.recruitment.states import participant_state_set

pytestmark = pytest.mark.django_db

DROPOUT = "P008"  # timed out after finishing all four of their sessions
FLAGGED = "P007"  # completed, but flagged by the minimum-effort rules


@pytest.fixture
def states(scored):
    """P008 a dropout, P007 flagged, the rest completed; every session rated after the task (the
    meta-evaluation reads the ratings from the sessions)."""
    built, run = scored
    for index, session in enumerate(SearchSession.objects.filter(pk__in=[s["id"] for s in built.sessions])):
        session.post_task_answers = {"search_went_well": 1 + (index * 7) % 5}
        session.save(update_fields=["post_task_answers"])
    for participant in built.study.participants.order_by("enrolment_index"):
        if participant.code == DROPOUT:
            participant_state_set(participant=participant, state=ParticipantState.TIMED_OUT, reason="late")
        elif participant.code == FLAGGED:
            participant_state_set(
                participant=participant,
                state=ParticipantState.COMPLETED,
                reason="effort below the study's rules: task 1 has 1 query, the rule asks 2",
            )
        else:
            participant_state_set(participant=participant, state=ParticipantState.COMPLETED)
    return built, run


def _get(client, run, chart, fmt="json", status=200, **query):
    response = client.get(reverse(f"scoring:chart_{fmt}", args=[run.study.slug, run.pk, chart]), query)
    assert response.status_code == status, response.content[:300]
    if fmt == "csv":
        return list(csv.reader(io.StringIO(response.content.decode())))
    return response.json()


def _population_note(payload) -> str:
    return next(note for note in payload["notes"] if note.startswith("Population: "))


def _query(built, chart, **population):
    """Figure 4 draws one scenario on one system: the dropout's, so that their session is in it."""
    if chart != "sessions":
        return population
    record = next(s for s in built.sessions if s["participant"] == DROPOUT and s["scenario"] == "S1")
    return {"scenario": "S1", "system_one": record["system"], **population}


@pytest.mark.parametrize("chart", list(CHARTS))
def test_each_chart_counts_the_dropout_under_itt_and_not_under_completers(client, states, chart):
    built, run = states
    client.force_login(built.study.owner)
    itt = _get(client, run, chart, **_query(built, chart, population="itt"))
    completers = _get(client, run, chart, **_query(built, chart, population="completers"))
    if chart == "participants":
        assert "n = 8 participants" in _population_note(itt)
        assert "n = 7 participants" in _population_note(completers)
        assert f"1 participant outside it left out ({DROPOUT})" in _population_note(completers)
    elif chart == "sessions":  # one scenario: each participant's one session of it
        assert "n = 8 sessions of 8 participants" in _population_note(itt)
        assert "n = 7 sessions of 7 participants" in _population_note(completers)
        assert f"1 session of 1 participant outside it left out ({DROPOUT})" in _population_note(completers)
    else:
        assert "n = 32 sessions of 8 participants" in _population_note(itt)
        assert "n = 28 sessions of 7 participants" in _population_note(completers)
        assert f"4 sessions of 1 participant outside it left out ({DROPOUT})" in _population_note(completers)
    assert "intention to treat" in _population_note(itt)
    assert "completers only" in _population_note(completers)
    assert "population: intention to treat, n = " in itt["figure"]["layout"]["title"]["text"]
    assert "population: completers only, n = " in completers["figure"]["layout"]["title"]["text"]
    # The chart itself changes, not only its notes.
    assert json.dumps(itt["figure"]["data"]) != json.dumps(completers["figure"]["data"]), chart
    table = _get(client, run, chart, "csv", **_query(built, chart, population="completers"))
    if len(table) > 1:
        at = table[0].index("population")
        assert {row[at] for row in table[1:]} == {"completers"}
        counted = {"participants": "7", "sessions": "7"}.get(chart, "28")
        assert {row[at + 1] for row in table[1:]} == {counted}


def test_the_studys_default_applies_when_the_query_names_none(client, states):
    built, run = states
    client.force_login(built.study.owner)
    assert "n = 32 sessions" in _population_note(_get(client, run, "curves"))  # itt:excluded, no marks
    page = reverse("scoring:run_detail", args=[built.study.slug, run.pk])
    response = client.post(
        reverse("scoring:population_default", args=[built.study.slug]),
        {"population": "completers", "next": page + "?unit=session"},
    )
    assert response.status_code == 302 and response["Location"] == page + "?unit=session"
    built.study.refresh_from_db()
    assert built.study.analysis_population == "completers"
    assert "n = 28 sessions" in _population_note(_get(client, run, "curves"))
    assert "n = 32 sessions" in _population_note(_get(client, run, "curves", population="itt"))
    html = client.get(page).content.decode()
    assert 'id="population-counted"' in html and "n = 28 sessions of 7 participants" in html


def test_a_bad_population_is_a_400_naming_it_and_changes_nothing(client, states):
    built, run = states
    client.force_login(built.study.owner)
    response = client.get(
        reverse("scoring:chart_json", args=[built.study.slug, run.pk, "curves"]), {"population": "everyone"}
    )
    assert response.status_code == 400 and "population: 'everyone'" in response.json()["error"]
    response = client.get(
        reverse("scoring:chart_json", args=[built.study.slug, run.pk, "curves"]), {"leave_out": "tall"}
    )
    assert response.status_code == 400 and "leave_out: 'tall'" in response.json()["error"]
    refused = client.post(
        reverse("scoring:population_default", args=[built.study.slug]), {"population": "itt:tall"}
    )
    assert refused.status_code == 400
    built.study.refresh_from_db()
    assert built.study.analysis_population is None


def test_leave_outs_by_state_and_check(client, states):
    built, run = states
    client.force_login(built.study.owner)
    timed_out = _population_note(_get(client, run, "curves", population="itt", leave_out="timed_out"))
    assert "n = 28 sessions" in timed_out and "leaving out participants timed out" in timed_out
    flagged = _population_note(_get(client, run, "curves", population="completers:effort_flagged"))
    assert "n = 24 sessions of 6 participants" in flagged
    assert f"8 sessions of 2 participants outside it left out ({FLAGGED}, {DROPOUT})" in flagged
    both = _population_note(
        _get(client, run, "curves", population="itt", leave_out="timed_out,effort_flagged")
    )
    assert "n = 24 sessions" in both


def test_a_cached_chart_follows_a_participants_new_state(client, states):
    built, run = states
    client.force_login(built.study.owner)
    assert "n = 28 sessions" in _population_note(_get(client, run, "statistics", population="completers"))
    someone = built.study.participants.get(code="P001")
    participant_state_set(participant=someone, state=ParticipantState.WITHDRAWN, reason="asked to leave")
    assert "n = 24 sessions" in _population_note(_get(client, run, "statistics", population="completers"))
