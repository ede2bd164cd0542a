"""Reads of a power plan: its curve so far (the stored chunks summed per count), with the closed form where
one exists and the smallest counts reaching the target."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Sum

from studies.simulation.calibration import calibration_sentence, study_behaviour_sentence

from ..lib.power import PowerPoint, paired_t_power, paired_t_smallest_n, power_point, smallest_count
from ..models import PowerPlan
from .simulate import scorable_sessions

LEVEL = 0.95  # the Monte Carlo intervals drawn and exported


@dataclass
class PlanCurve:
    points: list[PowerPoint]
    closed_form: dict[int, float] = field(default_factory=dict)
    smallest: int | None = None  # the point estimate reaches the target (and stays above it)
    smallest_surely: int | None = None  # the whole Monte Carlo interval is at or above the target
    closed_smallest: int | None = None
    complete: bool = False
    # A pilot plan: the latest finished simulated plan of the same comparison, (its id, its description).
    simulation: tuple[int, dict] | None = None


def closed_form_inputs(plan: PowerPlan) -> tuple[float, float] | None:
    """(difference, spread) for the noncentral t closed form of a paired t-test: the specified ones, or the
    pilot's raw paired differences (the normal approximation of the pilot, drawn for comparison); None for
    other tests."""
    if plan.test != "paired_t":
        return None
    if plan.effect == PowerPlan.Effect.SPECIFIED:
        return plan.specified_effect
    description = (plan.sample or {}).get("description") or {}
    spread = description.get("spread")
    if description.get("paired", 0) >= 2 and spread and spread > 0:
        return description["raw_difference"], spread
    return None


def plan_curve(plan: PowerPlan) -> PlanCurve:
    sums = (
        plan.chunks.values("count")
        .order_by("count")
        .annotate(replications=Sum("replications"), rejections=Sum("rejections"))
    )
    points = [power_point(row["count"], row["rejections"], row["replications"], level=LEVEL) for row in sums]
    complete = (
        plan.status == PowerPlan.Status.DONE
        and all(p.replications == plan.replications for p in points)
        and len(points) == len(plan.counts)
    )
    curve = PlanCurve(points=points, complete=complete)
    if complete:
        curve.smallest = smallest_count(points, plan.target)
        curve.smallest_surely = smallest_count(points, plan.target, surely=True)
    if plan.effect == PowerPlan.Effect.PILOT:
        simulated = (
            PowerPlan.objects.filter(
                study_id=plan.study_id,
                effect=PowerPlan.Effect.SIMULATED,
                status=PowerPlan.Status.DONE,
                summary=plan.summary,
                first_system_id=plan.first_system_id,
                second_system_id=plan.second_system_id,
            )
            .order_by("-finished_at", "-id")
            .values_list("pk", "sample")
            .first()
        )
        if simulated and (simulated[1] or {}).get("description"):
            curve.simulation = (simulated[0], simulated[1]["description"])
    inputs = closed_form_inputs(plan)
    if inputs is not None:
        difference, spread = inputs
        curve.closed_form = {
            n: paired_t_power(n, difference, spread, alpha=plan.alpha, alternative=plan.alternative)
            for n in plan.counts
        }
        curve.closed_smallest = paired_t_smallest_n(
            difference, spread, plan.target, alpha=plan.alpha, alternative=plan.alternative
        )
    return curve


def searchers_calibration_lines(study) -> list[str]:
    """What the simulated searchers were calibrated on, beside the power figures: the committed calibration
    against the TREC 2012 Session Track log, and the study's own sessions in the same terms (the demo's are
    the simulated searchers on its collection)."""
    own = study_behaviour_sentence(scorable_sessions(study))
    return [calibration_sentence(), *([own] if own else [])]
