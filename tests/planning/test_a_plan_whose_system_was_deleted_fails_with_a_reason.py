"""A pilot plan whose system was deleted before it started (its foreign key set to null) fails with a reason
the page shows, instead of the start task crashing on a missing design index and leaving the plan queued."""

import pytest

from scoring.models import PowerPlan
from scoring.planning import services
from scoring.planning.tasks import power_plan_start_task

pytestmark = pytest.mark.django_db


def test_the_start_marks_the_plan_failed_naming_the_systems(scored):
    built, _run = scored
    a, b = built.study.systems.order_by("id")
    plan, _ = services.power_plan_create(
        study=built.study, first_system=a, second_system=b, counts=[8], effect="pilot", replications=50
    )
    PowerPlan.objects.filter(pk=plan.pk).update(second_system=None)  # deleted: SET_NULL
    assert power_plan_start_task(plan.pk) == 0
    plan.refresh_from_db()
    assert plan.status == PowerPlan.Status.FAILED
    assert plan.error == "systems: a system of the plan was deleted"
