"""A plan asked with bad input is refused with the field and the reason, and nothing is written; a study the
researcher cannot see is a 404."""

import html

import pytest
from django.urls import reverse

from scoring.models import PowerPlan

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
        "counts": "8,16",
        "replications": "100",
        "alpha": "0.05",
        "target": "0.8",
        "seed": "1",
    }
    data.update(fields)
    return client.post(reverse("scoring:planning", args=[study.slug]), data)


@pytest.mark.parametrize(
    ("fields", "field", "reason"),
    [
        ({"counts": "8,x"}, "counts", "whole numbers separated by commas"),
        ({"counts": "1,8"}, "counts", "every count must be at least 2 participants"),
        ({"counts": "8,5000"}, "counts", "at most 2000 participants"),
        ({"spread": ""}, "spread", "a specified effect needs a spread > 0"),
        ({"spread": "-1"}, "spread", "a specified effect needs a spread > 0"),
        ({"difference": ""}, "difference", "a specified effect needs the difference"),
        ({"replications": "0"}, "replications", "greater than or equal to 1"),
        ({"target": "1.5"}, "target", "less than or equal to 0.999"),
        ({"effect": "pilot"}, "run", "the study has no scoring run to take a pilot from"),
    ],
)
def test_bad_input_names_the_field_and_writes_nothing(client, designed_study, fields, field, reason):
    client.force_login(designed_study.owner)
    response = _post(client, designed_study, **fields)
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert field in errors and reason in " ".join(errors[field]), errors
    assert html.escape(reason, quote=False).encode() in response.content
    assert PowerPlan.objects.count() == 0


def test_the_same_system_twice_is_refused(client, designed_study):
    client.force_login(designed_study.owner)
    a = designed_study.systems.order_by("id").first()
    response = _post(client, designed_study, second_system=a.pk)
    assert response.status_code == 400
    assert "systems: choose two different systems" in " ".join(response.context["form"].non_field_errors())
    assert PowerPlan.objects.count() == 0


def test_another_labs_researcher_sees_neither_the_planner_nor_a_plan(
    client, designed_study, charlie, django_capture_on_commit_callbacks
):
    client.force_login(designed_study.owner)
    with django_capture_on_commit_callbacks(execute=True):
        _post(client, designed_study)
    plan = PowerPlan.objects.get()
    client.force_login(charlie)
    for name, args in [
        ("scoring:planning", []),
        ("scoring:planning_plan", [plan.pk]),
        ("scoring:planning_status", [plan.pk]),
        ("scoring:planning_chart", [plan.pk]),
        ("scoring:planning_csv", [plan.pk]),
    ]:
        assert client.get(reverse(name, args=[designed_study.slug, *args])).status_code == 404
    assert _post(client, designed_study).status_code == 404
    assert PowerPlan.objects.count() == 1
