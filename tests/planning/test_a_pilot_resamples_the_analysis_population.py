"""Planning uses the analysis population: a pilot resamples the sessions of the population asked
for, the study's default when none is; the plan records it and its notes say it; another population, or a
participant who moves out of it since, is another plan; a population naming nothing is refused by field."""

import pytest
from django.urls import reverse

from scoring.models import PowerPlan
from scoring.planning import services
from studies.models import ParticipantState
from studies.participation.recruitment.states import participant_state_set

pytestmark = pytest.mark.django_db


@pytest.fixture
def states(scored):
    """P008 timed out after their four sessions; everyone else completed."""
    built, run = scored
    for participant in built.study.participants.all():
        state = ParticipantState.TIMED_OUT if participant.code == "P008" else ParticipantState.COMPLETED
        participant_state_set(participant=participant, state=state)
    return built, run


def _pilot(study, capture, **overrides):
    a, b = study.systems.order_by("id")
    options = {"first_system": a, "second_system": b, "counts": [8], "replications": 250, "effect": "pilot"}
    with capture(execute=True):
        plan, reused = services.power_plan_create(study=study, **{**options, **overrides})
    plan.refresh_from_db()
    return plan, reused


def test_a_pilot_resamples_the_population_asked_for(states, django_capture_on_commit_callbacks):
    built, run = states
    itt, _ = _pilot(built.study, django_capture_on_commit_callbacks, population="itt")
    completers, reused = _pilot(built.study, django_capture_on_commit_callbacks, population="completers")
    assert not reused and completers.pk != itt.pk
    assert (itt.population, completers.population) == ("itt", "completers")
    assert itt.status == completers.status == "done", (itt.error, completers.error)
    assert (len(itt.sample["values"]), itt.sample["description"]["participants"]) == (32, 8)
    assert (len(completers.sample["values"]), completers.sample["description"]["participants"]) == (28, 7)
    assert completers.sample["population"] == "completers"
    assert "population completers only (population=completers)" in completers.sample["source"]
    by_state = _pilot(built.study, django_capture_on_commit_callbacks, population="itt:timed_out")[0]
    assert len(by_state.sample["values"]) == 28


def test_the_studys_default_population_is_the_plans_unless_asked(states, django_capture_on_commit_callbacks):
    built, _run = states
    study = built.study
    study.analysis_population = "completers"
    study.save(update_fields=["analysis_population"])
    plan, _ = _pilot(study, django_capture_on_commit_callbacks)
    assert plan.population == "completers" and len(plan.sample["values"]) == 28


def test_a_participant_leaving_the_population_makes_a_new_plan(states, django_capture_on_commit_callbacks):
    built, _run = states
    first, _ = _pilot(built.study, django_capture_on_commit_callbacks, population="completers")
    again, reused = _pilot(built.study, django_capture_on_commit_callbacks, population="completers")
    assert reused and again.pk == first.pk
    someone = built.study.participants.get(code="P001")
    participant_state_set(participant=someone, state=ParticipantState.WITHDRAWN, reason="left")
    fresh, reused = _pilot(built.study, django_capture_on_commit_callbacks, population="completers")
    assert not reused and len(fresh.sample["values"]) == 24


def test_the_planner_page_offers_the_default_and_refuses_a_bad_population(client, states):
    built, _run = states
    study = built.study
    client.force_login(study.owner)
    url = reverse("scoring:planning", args=[study.slug])
    assert client.get(url).context["form"].fields["population"].initial == "itt:excluded"
    a, b = study.systems.order_by("id")
    response = client.post(
        url,
        {
            "summary": "normalized_final",
            "test": "paired_t",
            "alternative": "two-sided",
            "first_system": a.pk,
            "second_system": b.pk,
            "effect": "pilot",
            "between": "0",
            "counts": "8",
            "replications": "250",
            "alpha": "0.05",
            "target": "0.8",
            "seed": "7",
            "population": "completers:tall",
        },
    )
    assert response.status_code == 400
    assert response.context["form"].errors["population"] == [
        "population: leave_out: 'tall' is not one of excluded, failed_checks, screened_out, timed_out, "
        "returned, withdrawn, effort_flagged, unfinished"
    ]
    assert not PowerPlan.objects.exists()


def test_the_planner_says_whether_the_default_run_it_reads_is_current(client, scored):
    """The planner page names the default run a pilot reads and whether its scores are current; a new
    reference version since makes it say why not (scoring/freshness.py decides)."""
    from studies.models import ReferenceVersion

    built, run = scored
    client.force_login(built.study.owner)
    url = reverse("scoring:planning", args=[built.study.slug])
    page = client.get(url).content.decode()
    assert f"run {run.pk}</a>" in page and "its scores are current." in page
    ReferenceVersion.objects.create(study=built.study, number=99, note="a later version, not yet scored")
    page = client.get(url).content.decode()
    assert 'class="freshness stale"' in page and "its scores are not current (" in page
    assert "v99 is the latest" in page
