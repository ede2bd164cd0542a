"""`load_demo` plans the demo study from its own scored sessions, as the README says: a pilot plan of B
against A on the default run, done with its curve, and its figures printed with the logins."""

import pytest
from django.core.management import call_command

from scoring.models import PowerPlan, ScoringRun
from scoring.planning.selectors import plan_curve

pytestmark = pytest.mark.django_db(transaction=True)  # on-commit queueing, as in the command


@pytest.fixture(autouse=True)
def _indexes_in_tmp(settings, tmp_path):
    settings.INDEX_ROOT = tmp_path / "indexes"


def test_the_demo_comes_with_its_plan_done(capsys, settings):
    settings.DEMO_DATA = "generated"
    call_command("load_demo")
    out = capsys.readouterr().out
    plan = PowerPlan.objects.get()
    assert plan.status == "done", plan.error
    assert plan.effect == "pilot" and (plan.second_system.code, plan.first_system.code) == ("B", "A")
    assert plan.run == ScoringRun.objects.get(is_default=True)
    curve = plan_curve(plan)
    assert curve.complete and [p.n for p in curve.points][:3] == [10, 20, 30]
    power = {p.n: p.power for p in curve.points}[30]
    assert f"power plan {plan.pk} (B vs A, from these sessions) is done: power {power:.2f} at its 30" in out
