"""The planner end to end on a study: the form, a plan computed by its (eager) chunked job, the page with the
curve's notes, the curve JSON for Plotly and the CSV."""

import csv
import io

import pytest
from django.urls import reverse

from scoring.lib.power import paired_t_power, proportion_interval
from scoring.models import PowerChunk, PowerPlan

pytestmark = pytest.mark.django_db


def _post(client, study, **fields):
    a, b = study.systems.order_by("id")
    data = {
        "summary": "normalized_final",
        "test": "paired_t",
        "alternative": "two-sided",
        "first_system": a.pk,
        "second_system": b.pk,
        "effect": "specified",
        "difference": "0.5",
        "spread": "1",
        "between": "0",
        "counts": "8,16,24,32",
        "replications": "400",
        "alpha": "0.05",
        "target": "0.8",
        "seed": "7",
    }
    data.update(fields)
    return client.post(reverse("scoring:planning", args=[study.slug]), data)


def test_the_planner_form_offers_the_study_systems_and_block_counts(client, designed_study):
    client.force_login(designed_study.owner)
    response = client.get(reverse("scoring:planning", args=[designed_study.slug]))
    assert response.status_code == 200
    form = response.context["form"]
    assert [s.code for s in form.fields["first_system"].queryset] == ["A", "B"]
    # 4 scenarios x 2 systems: blocks of 8 participants
    assert form.fields["counts"].initial == "8,16,24,32,40,48,56,64,72,80"


def test_a_specified_plan_is_computed_in_chunks_and_drawn_with_the_closed_form(
    client, designed_study, django_capture_on_commit_callbacks
):
    client.force_login(designed_study.owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(client, designed_study)
    plan = PowerPlan.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("scoring:planning_plan", args=[designed_study.slug, plan.pk])
    plan.refresh_from_db()
    assert plan.status == "done", plan.error
    assert (plan.progress_done, plan.progress_total) == (1600, 1600)
    # 400 replications in chunks of 250: two chunks per count
    assert sorted(PowerChunk.objects.values_list("count", "start", "replications")) == [
        (n, s, r) for n in (8, 16, 24, 32) for s, r in ((0, 250), (250, 150))
    ]

    payload = client.get(reverse("scoring:planning_chart", args=[designed_study.slug, plan.pk])).json()
    monte_carlo, closed = payload["figure"]["data"]
    assert monte_carlo["x"] == [8, 16, 24, 32]
    for n, power, above, below in zip(
        monte_carlo["x"],
        monte_carlo["y"],
        monte_carlo["error_y"]["array"],
        monte_carlo["error_y"]["arrayminus"],
        strict=True,
    ):
        exact = paired_t_power(n, 0.5, 1.0)
        low, high = proportion_interval(round(power * 400), 400, level=0.999)
        assert low <= exact <= high
        assert below >= 0 and above >= 0
    assert closed["y"] == pytest.approx([paired_t_power(n, 0.5, 1.0) for n in (8, 16, 24, 32)])
    assert any(
        "Closed form (noncentral t, dashed) reaches 80% at 34 participants" in n for n in payload["notes"]
    )
    assert any(n.startswith("No count in the range reaches 80% power") for n in payload["notes"])

    page = client.get(reverse("scoring:planning_plan", args=[designed_study.slug, plan.pk]))
    assert page.status_code == 200
    assert b"vendor/plotly-4.1.1.min.js" in page.content and b"js/planning.js" in page.content
    assert b"<script>" not in page.content  # the Content-Security-Policy allows no inline script
    assert b"1600/1600 simulated studies" in page.content


def test_the_csv_has_one_row_per_count_with_its_interval(
    client, designed_study, django_capture_on_commit_callbacks
):
    client.force_login(designed_study.owner)
    with django_capture_on_commit_callbacks(execute=True):
        _post(client, designed_study, counts="8,40", replications="300")
    plan = PowerPlan.objects.get()
    response = client.get(reverse("scoring:planning_csv", args=[designed_study.slug, plan.pk]))
    assert response["Content-Type"] == "text/csv"
    assert f"power-plan{plan.pk}.csv" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [int(r["participants"]) for r in rows] == [8, 40]
    for row in rows:
        chunks = PowerChunk.objects.filter(plan=plan, count=int(row["participants"]))
        assert int(row["rejections"]) == sum(c.rejections for c in chunks)
        assert float(row["mc_low"]) <= float(row["power"]) <= float(row["mc_high"])
        assert float(row["closed_form_power"]) == pytest.approx(
            paired_t_power(int(row["participants"]), 0.5, 1.0), abs=1e-4
        )


def test_a_pilot_plan_resamples_the_scored_sessions(client, scored, django_capture_on_commit_callbacks):
    built, run = scored
    study = built.study
    client.force_login(study.owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(
            client, study, effect="pilot", difference="", spread="", counts="8,16", replications="250"
        )
    assert response.status_code == 302
    plan = PowerPlan.objects.get()
    plan.refresh_from_db()
    assert plan.status == "done", plan.error
    assert plan.run == run and len(plan.sample["values"]) == 32
    assert plan.sample["description"]["participants"] == 8
    notes = client.get(reverse("scoring:planning_chart", args=[study.slug, plan.pk])).json()["notes"]
    assert any(
        n.startswith(
            f"From scoring run {run.pk}, population intention to treat without excluded "
            "(population=itt:excluded) (8 participants, 32 sessions): B minus A = "
        )
        for n in notes
    )
    assert any("With the pilot's own 8 participants: power" in n for n in notes)
    # the closed form with the pilot's raw paired differences as normal, for comparison
    description = plan.sample["description"]
    traces = client.get(reverse("scoring:planning_chart", args=[study.slug, plan.pk])).json()["figure"][
        "data"
    ]
    assert traces[1]["y"] == pytest.approx(
        [paired_t_power(n, description["raw_difference"], description["spread"]) for n in (8, 16)]
    )
    assert any("with the pilot's raw paired differences taken as normal" in n for n in notes)
