"""The demo's simulated participants act at a person's pace on the one timeline (docs/time-model.md): seconds
to read, type, scan and judge, so their sessions last minutes, not the instant the server took, and every
click falls between its query and the next."""

from datetime import timedelta
from itertools import pairwise

import pytest

from studies.models import Event, Query, Scenario, SearchSession
from studies.participation.clock import on_timeline
from studies.participation.simulation import participants_simulate

pytestmark = pytest.mark.django_db


@pytest.fixture
def simulated(running_study):
    Scenario.objects.filter(study=running_study).update(text="wing flow boundary layer heat transfer shock")
    reference = {str(n): {str(d): 3 if d % 3 == 0 else 1 for d in range(1, 26)} for n in range(1, 5)}
    participants_simulate(
        participants=list(running_study.participants.order_by("enrolment_index")), reference=reference, seed=7
    )
    return running_study


def test_sessions_last_as_long_as_their_actions(simulated):
    sessions = list(SearchSession.objects.filter(assignment__participant__study=simulated))
    assert len(sessions) == 8
    for session in sessions:
        lasted = session.ended_at - session.started_at
        assert timedelta(seconds=10) < lasted < timedelta(hours=2), lasted
        times = [
            on_timeline(e.client_time, e.server_time, session.clock_offset_ms)
            for e in Event.objects.filter(session=session).order_by("id")
        ]
        assert times == sorted(times)  # the log's order is the timeline's
        assert session.started_at == times[0] and session.ended_at in times


def test_queries_are_seconds_apart_and_clicks_fall_between_them(simulated):
    for session in SearchSession.objects.filter(assignment__participant__study=simulated):
        issued = list(
            Query.objects.filter(session=session).order_by("position").values_list("issued_at", flat=True)
        )
        assert all(later - earlier >= timedelta(seconds=5) for earlier, later in pairwise(issued))
        assert issued[0] - session.started_at >= timedelta(seconds=5)  # typing the first query
        bounds = issued + [session.ended_at]
        for event in Event.objects.filter(session=session, type="document_open"):
            position = event.payload["data"]["query"]
            at = on_timeline(event.client_time, event.server_time, session.clock_offset_ms)
            assert bounds[position - 1] < at < bounds[position]


def test_the_same_seed_gives_the_same_pace(running_study):
    Scenario.objects.filter(study=running_study).update(text="wing flow boundary layer heat transfer shock")
    participant = running_study.participants.order_by("enrolment_index").first()
    participants_simulate(participants=[participant], reference={}, seed=7)
    gaps = [e.client_time for e in Event.objects.filter(participant=participant).order_by("id")]
    gaps = [(b - a).total_seconds() for a, b in pairwise(gaps)]
    assert 20 <= gaps[0] <= 120  # the questionnaire after the consent
    assert all(gap > 0 for gap in gaps)
