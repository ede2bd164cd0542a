"""The demo's simulated participants act at a person's pace on the one timeline (docs/time-model.md): seconds
to read, type, scan and judge, so their sessions last minutes, not the instant the server took, and every
click falls between its query and the next."""

from datetime import timedelta
from itertools import pairwise

import pytest

from studies.models import Event, Query, Scenario, SearchSession
from studies.participation.events.clock import on_timeline
from studies.simulation.participants import participants_simulate

pytestmark = pytest.mark.django_db


@pytest.fixture
def simulated(simulated_study):
    return simulated_study


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


def test_simulated_searchers_report_what_was_on_screen_as_the_page_does(simulated):
    """The simulation's exposure goes through the same events as exposure.js's, so the demo's
    replay and charts have it: every query's scanned ranks were on screen, the deepest of them is where the
    searcher marked it stopped scanning, and the opened documents were hovered."""
    from studies.models import AttentionSpan, PageExposure, ResultExposure
    from studies.participation.events.exposure import RankExposure, observed_scan_depth

    queries = Query.objects.filter(session__assignment__participant__study=simulated)
    assert queries.exists()
    for query in queries.exclude(scan_mark_rank=None):
        seen = [
            RankExposure(e.shown_result.rank, e.first_visible_ms, e.visible_ms, e.max_permille)
            for e in ResultExposure.objects.filter(shown_result__query=query).select_related("shown_result")
        ]
        assert observed_scan_depth(seen, 500) == query.scan_mark_rank
        assert PageExposure.objects.filter(query=query).exists()
    opened = Event.objects.filter(session__assignment__participant__study=simulated, type="document_open")
    for event in opened:
        exposure = ResultExposure.objects.get(
            shown_result__query__session=event.session,
            shown_result__query__position=event.payload["data"]["query"],
            shown_result__rank=event.payload["data"]["rank"],
        )
        assert exposure.hovers >= 1 and exposure.hover_ms >= 300
    # One report per query that showed results (a calibrated searcher's one-word query may find nothing).
    showing = queries.filter(shown_results__isnull=False).distinct()
    assert showing.exists()
    assert Event.objects.filter(type="exposure", payload__ack__ok=True).count() >= showing.count()
    spans = AttentionSpan.objects.filter(session__assignment__participant__study=simulated)
    assert spans.exists() and all(s.kind in ("blur", "idle") and s.duration_ms >= 5000 for s in spans)
