"""The planning pages say what the simulated searchers were calibrated on, beside the power figures: the
committed calibration against the TREC 2012 Session Track log, and the study's own sessions in the same
terms (here: the calibrated searchers on the test collection, through the real services)."""

import pytest
from django.urls import reverse

from scoring.lib.session_log_stats import behaviour_statistics
from scoring.planning.simulate import studies_services
from studies.models import Event, Query, SearchSession
from studies.simulation.calibration import calibration_sentence, study_logged_sessions
from studies.simulation.participants import participants_simulate

from .conftest import reference_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def simulated(searchable_study):
    people = studies_services()[0].participants_enrol(study=searchable_study, count=4)
    participants_simulate(participants=people, reference=reference_of(searchable_study), seed=5)
    return searchable_study


def test_the_planner_page_states_the_calibration_and_the_study_s_own_figures(client, simulated):
    client.force_login(simulated.owner)
    page = client.get(reverse("scoring:planning", args=[simulated.slug])).content.decode()
    assert calibration_sentence() in page
    assert "Simulated searchers calibrated on TREC 2012 Session Track: queries/session" in page
    sessions = SearchSession.objects.filter(assignment__participant__study=simulated)
    queries = Query.objects.filter(session__in=sessions).count()
    opens = Event.objects.filter(session__in=sessions, type="document_open").count()
    assert (
        f"This study&#x27;s {sessions.count()} sessions: queries/session {queries / sessions.count():.2f}"
        in page
    )
    assert f"clicks/query {opens / queries:.2f}" in page
    assert reverse("doc_page", args=["planning"]) + "#calibrated-searchers" in page


def test_the_study_s_sessions_are_read_in_the_log_s_terms(simulated):
    sessions = SearchSession.objects.filter(assignment__participant__study=simulated)
    logged = study_logged_sessions(sessions.values_list("pk", flat=True))
    assert len(logged) == sessions.count()
    figures = behaviour_statistics(logged)
    opens = Event.objects.filter(session__in=sessions, type="document_open")
    assert figures["click_rank"]["n"] == opens.count() > 0
    assert figures["click_rank"]["mean"] == pytest.approx(
        sum(e.payload["data"]["rank"] for e in opens) / opens.count()
    )
    closes = Event.objects.filter(session__in=sessions, type="document_close")
    assert figures["dwell_seconds"]["mean"] == pytest.approx(
        sum(e.payload["data"]["dwell_ms"] for e in closes) / closes.count() / 1000
    )


def test_a_study_without_sessions_gets_the_calibration_alone(client, searchable_study):
    client.force_login(searchable_study.owner)
    page = client.get(reverse("scoring:planning", args=[searchable_study.slug])).content.decode()
    assert calibration_sentence() in page and "This study" not in page


def test_a_plan_s_page_states_it_beside_its_curve(client, simulated, django_capture_on_commit_callbacks):
    from scoring.planning import services

    first, second = simulated.systems.order_by("id")
    with django_capture_on_commit_callbacks(execute=True):
        plan, _ = services.power_plan_create(
            study=simulated,
            first_system=first,
            second_system=second,
            counts=[8, 16],
            difference=0.02,
            spread=0.08,
            replications=100,
        )
    client.force_login(simulated.owner)
    page = client.get(reverse("scoring:planning_plan", args=[simulated.slug, plan.pk])).content.decode()
    assert "Power curve" in page and calibration_sentence() in page
    assert "This study&#x27;s 16 sessions: queries/session" in page
