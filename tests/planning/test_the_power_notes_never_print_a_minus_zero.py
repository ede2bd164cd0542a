"""The power curve's notes print a figure that rounds to zero as 0.00, never "-0.00" (nor "-0"), as the
dashboards do (issue 38): a specified difference of -0.0, a simulation's effect size of -0.0004, a pilot's
difference of -0.00001 are all zero at the precision shown. Its legend is drawn beside the plot, clear of
the title and of the axis titles."""

import re

from scoring.models import PowerPlan
from scoring.planning.charts import plan_figure, plan_notes
from scoring.planning.selectors import PlanCurve, power_point

MINUS_ZERO = re.compile(r"-0(?:\.0+)?(?![.\d])")


def _plan(**fields) -> PowerPlan:
    return PowerPlan(test="paired_t", alternative="two-sided", alpha=0.05, replications=100, **fields)


def test_a_specified_effect_of_minus_zero_prints_0():
    notes = plan_notes(
        _plan(effect=PowerPlan.Effect.SPECIFIED, difference=-0.0, spread=0.2), PlanCurve(points=[])
    )
    assert "= 0, the participants' paired differences spread 0.2" in notes[1], notes[1]
    assert "effect size d = 0)" in notes[1]
    assert not any(MINUS_ZERO.search(note) for note in notes), notes


def test_a_simulation_s_tiny_negative_effect_prints_0_00_not_minus_0_00():
    simulated = {"participants": 8, "sessions": 32, "difference": -0.00001, "raw_difference": -0.0004}
    simulated["spread"] = 1.0
    plan = _plan(effect=PowerPlan.Effect.SIMULATED, sample={"description": simulated, "strategy": {}})
    notes = plan_notes(plan, PlanCurve(points=[]))
    told = next(note for note in notes if note.startswith("Simulated searchers"))
    assert "(d = 0.00)." in told, told
    assert not any(MINUS_ZERO.search(note) for note in notes), notes


def test_the_power_curve_s_legend_is_beside_the_plot_under_a_title_with_room():
    curve = PlanCurve(points=[power_point(10, 40, 100, level=0.95), power_point(20, 70, 100, level=0.95)])
    layout = plan_figure(_plan(summary="normalized_final", target=0.8), curve)["layout"]
    assert layout["legend"]["orientation"] == "v" and layout["legend"]["x"] > 1
    assert layout["legend"]["yanchor"] == "top" and layout["legend"]["y"] == 1
    assert layout["margin"]["t"] >= 22 + 36  # the title's line and room above the plot area
