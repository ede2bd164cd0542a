"""Results are cached by their parameters: the same plan asked twice on the same data is the plan made before;
other parameters, or a pilot whose scores changed since, make a new one. A finished curve is served from the
cache without reading its chunks again."""

import pytest
from django.db.models import F
from django.urls import reverse

from scoring.models import PowerPlan, ScoringRun
from scoring.planning import services

pytestmark = pytest.mark.django_db


def _ask(study, **overrides):
    a, b = study.systems.order_by("id")
    options = {
        "first_system": a,
        "second_system": b,
        "counts": [8, 16],
        "difference": 0.3,
        "spread": 1.0,
        "replications": 300,
    }
    options.update(overrides)
    return services.power_plan_create(study=study, **options)


def test_the_same_parameters_give_the_same_plan(designed_study, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as queued:
        plan, reused = _ask(designed_study)
    assert not reused and len(queued) == 1
    with django_capture_on_commit_callbacks(execute=True) as queued:
        again, reused = _ask(designed_study, counts=[16, 8, 16])  # the same counts, in another order
    assert reused and again.pk == plan.pk and queued == []
    other, reused = _ask(designed_study, replications=301)
    assert not reused and other.pk != plan.pk
    assert PowerPlan.objects.count() == 2


def test_a_failed_plan_is_not_reused(designed_study):
    plan, _ = _ask(designed_study)
    services.power_plan_fail(plan_id=plan.pk, message="lost")
    again, reused = _ask(designed_study)
    assert not reused and again.pk != plan.pk


def test_a_pilot_plan_is_made_again_once_its_run_is_rescored(scored):
    built, run = scored
    plan, _ = _ask(built.study, effect="pilot", difference=None, spread=None)
    same, reused = _ask(built.study, effect="pilot", difference=None, spread=None)
    assert reused and same.pk == plan.pk
    ScoringRun.objects.filter(pk=run.pk).update(generation=F("generation") + 1)  # a pass finished since
    fresh, reused = _ask(built.study, effect="pilot", difference=None, spread=None)
    assert not reused and fresh.pk != plan.pk


def test_a_finished_curve_is_served_from_the_cache(
    client, designed_study, django_capture_on_commit_callbacks, django_assert_max_num_queries
):
    with django_capture_on_commit_callbacks(execute=True):
        plan, _ = _ask(designed_study)
    client.force_login(designed_study.owner)
    url = reverse("scoring:planning_chart", args=[designed_study.slug, plan.pk])
    first = client.get(url).json()
    assert first["complete"] is True
    with django_assert_max_num_queries(4):  # session, user, study, plan: no chunk is read
        second = client.get(url).json()
    assert second == first
