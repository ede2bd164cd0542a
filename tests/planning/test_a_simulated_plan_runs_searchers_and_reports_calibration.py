"""The planner's simulated effect: simulated searchers work the study's design on its own systems through the
real services, are scored with the plan's parameters and rolled back; the pool is resampled into a power
curve; the page compares the simulation with the real
sessions (the pilot) and shows the calibration report."""

import pytest
from django.urls import reverse

from scoring import services as scoring
from scoring.models import PowerPlan, SessionScore
from scoring.planning import services
from scoring.planning.simulate import studies_services
from studies.models import Participant, SearchSession, Study
from studies.simulation.searchers import Strategy, participants_simulate_with

from .conftest import reference_of

pytestmark = pytest.mark.django_db

STRATEGY = {
    "queries": "terms",
    "stopping": "combined",
    "satisfied_after": 2,
    "frustrated_after": 4,
    "max_queries": 3,
}


def _post(client, study, **fields):
    a, b = study.systems.order_by("id")
    data = {
        "summary": "normalized_final",
        "test": "paired_t",
        "alternative": "two-sided",
        "first_system": a.pk,
        "second_system": b.pk,
        "effect": "simulated",
        "between": "0",
        "counts": "8,16",
        "replications": "200",
        "alpha": "0.05",
        "target": "0.8",
        "seed": "5",
        "simulated_participants": "16",
        "queries": "terms",
        "query_length": "3",
        "stopping": "combined",
        "depth": "10",
        "satisfied_after": "2",
        "frustrated_after": "4",
        "max_queries": "3",
        "cost_query": "10",
        "cost_snippet": "2",
        "cost_document": "20",
        "cost_judgment": "3",
        "agreement": "0.8",
    }
    data.update(fields)
    return client.post(reverse("scoring:planning", args=[study.slug]), data)


def test_a_simulated_plan_leaves_the_study_untouched_and_draws_a_curve(
    client, searchable_study, django_capture_on_commit_callbacks
):
    client.force_login(searchable_study.owner)
    studies_before = Study.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(client, searchable_study)
    assert response.status_code == 302
    plan = PowerPlan.objects.get()
    plan.refresh_from_db()
    assert plan.status == "done", plan.error
    # the simulation ran in shadows of the study that were rolled back: nothing of it is left
    assert Study.objects.count() == studies_before
    assert not Participant.objects.exists() and not SearchSession.objects.exists()
    assert searchable_study.design_locked_at is None
    # 16 searchers x 4 scenarios, in two chunks of one block each
    assert len(plan.sample["values"]) == 64 and len(set(plan.sample["participant"])) == 16
    assert plan.sample["strategy"]["queries"] == "terms" and plan.sample["strategy"]["agreement"] == 0.8
    assert (plan.progress_done, plan.progress_total) == (16 + 400, 16 + 400)
    simulated = plan.sample["calibration"]["simulated"]
    assert simulated["queries"]["n"] == 64 and 1 <= simulated["queries"]["mean"] <= 3
    assert simulated["agreement"]["n"] > 0
    assert plan.sample["calibration"]["real"]["queries"]["n"] == 0  # no one has taken part yet
    payload = client.get(reverse("scoring:planning_chart", args=[searchable_study.slug, plan.pk])).json()
    assert payload["complete"] and payload["figure"]["data"][0]["x"] == [8, 16]
    assert any(
        "Simulated searchers (queries terms, stopping combined)" in n and "no scored real sessions" in n
        for n in payload["notes"]
    )
    page = client.get(reverse("scoring:planning_plan", args=[searchable_study.slug, plan.pk]))
    assert b"Calibration: simulated against real sessions" in page.content


def test_the_same_seed_simulates_the_same_pool(searchable_study, django_capture_on_commit_callbacks):
    a, b = searchable_study.systems.order_by("id")
    options = {
        "study": searchable_study,
        "first_system": a,
        "second_system": b,
        "counts": [8],
        "replications": 50,
        "effect": "simulated",
        "simulated_participants": 8,
        "strategy": STRATEGY,
    }
    with django_capture_on_commit_callbacks(execute=True):
        first, _ = services.power_plan_create(seed=9, **options)
    with django_capture_on_commit_callbacks(execute=True):
        second, _ = services.power_plan_create(seed=9, alpha=0.1, **options)
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.pk != second.pk and first.sample["values"] == second.sample["values"]


def test_with_real_sessions_the_page_says_how_simulation_and_pilot_differ(
    client, searchable_study, django_capture_on_commit_callbacks
):
    # a "pilot": eight participants who took part (played
    # here by the demo's searchers), scored by a default run
    people = studies_services()[0].participants_enrol(study=searchable_study, count=8)
    participants_simulate_with(
        participants=people, reference=reference_of(searchable_study), strategy=Strategy(), seed=1
    )
    with django_capture_on_commit_callbacks(execute=True):
        run = scoring.scoring_run_create(study=searchable_study)
    run.refresh_from_db()
    assert SessionScore.objects.filter(run=run).count() == 32
    client.force_login(searchable_study.owner)
    with django_capture_on_commit_callbacks(execute=True):
        _post(client, searchable_study)
    plan = PowerPlan.objects.get()
    plan.refresh_from_db()
    assert plan.status == "done", plan.error
    assert plan.sample["pilot"]["run"] == run.pk and plan.sample["pilot"]["participants"] == 8
    real = plan.sample["calibration"]["real"]
    assert real["queries"]["n"] == 32 and real["judgments"]["n"] == 32
    notes = client.get(reverse("scoring:planning_chart", args=[searchable_study.slug, plan.pk])).json()[
        "notes"
    ]
    comparison = next(n for n in notes if n.startswith("Simulated searchers"))
    assert f"The real sessions (scoring run {run.pk}, 8 participants) give" in comparison
    assert "the simulation overstates" in comparison or "the simulation understates" in comparison
    # and a pilot plan of the same comparison says how it differs from that simulation
    with django_capture_on_commit_callbacks(execute=True):
        _post(client, searchable_study, effect="pilot")
    pilot_plan = PowerPlan.objects.filter(effect="pilot").get()
    notes = client.get(reverse("scoring:planning_chart", args=[searchable_study.slug, pilot_plan.pk])).json()[
        "notes"
    ]
    assert any(
        n.startswith(f"Against the simulated searchers of plan #{plan.pk} (B minus A = ") for n in notes
    )
    # the enrolled study's own participants and sessions are still there, and only they
    assert Participant.objects.filter(study=searchable_study).count() == 8
    assert SearchSession.objects.count() == 32


@pytest.mark.parametrize(
    ("fields", "field", "reason"),
    [
        ({"stopping": "bored"}, "stopping", "Select a valid choice"),
        ({"agreement": "0.2"}, "agreement", "agreement: 0.2 is below what one-grade slips can give"),
        ({"simulated_participants": "1"}, "simulated_participants", "greater than or equal to 2"),
        ({"queries": "terms", "query_length": "0"}, "query_length", "greater than or equal to 1"),
    ],
)
def test_a_bad_simulation_is_refused_with_the_reason(client, searchable_study, fields, field, reason):
    client.force_login(searchable_study.owner)
    response = _post(client, searchable_study, **fields)
    assert response.status_code == 400
    assert reason in " ".join(response.context["form"].errors[field])
    assert not PowerPlan.objects.exists()


def test_a_study_without_reference_judgments_cannot_simulate(client, designed_study):
    client.force_login(designed_study.owner)
    response = _post(client, designed_study)
    assert response.status_code == 400
    errors = " ".join(response.context["form"].non_field_errors()) + " ".join(
        response.context["form"].errors.get("effect", [])
    )
    assert "the study has no collection" in errors or "reference judgments" in errors
