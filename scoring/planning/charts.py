"""The power curve as a Plotly figure, its notes in words, and its CSV rows."""

from __future__ import annotations

from ..dashboards.charts import title_and_legend_apart
from ..lib.number_text import number_text
from ..lib.power import TEST_LABELS
from ..lib.session import SUMMARY_LABELS
from ..models import PowerPlan
from .selectors import LEVEL, PlanCurve

CSV_HEADER = [
    "participants",
    "replications",
    "rejections",
    "power",
    "mc_low",
    "mc_high",
    "mc_interval",
    "closed_form_power",
    "test",
    "summary",
    "effect",
    "alpha",
    "target",
]


def _num(value, spec: str = ".4g") -> str:
    """A figure of the notes and the table: never "-0.00" for one that rounds to zero (number_text)."""
    return number_text(value, spec)


def _pct(value: float) -> str:
    return f"{_num(100 * value, '.0f')}%"


def plan_notes(plan: PowerPlan, curve: PlanCurve) -> list[str]:
    """What the curve says, in sentences (the page and the chart JSON carry them)."""
    first = plan.first_system.code if plan.first_system else "?"
    second = plan.second_system.code if plan.second_system else "?"
    measure = SUMMARY_LABELS.get(plan.summary, plan.summary)
    sided = "one-sided (second higher)" if plan.alternative == "greater" else "two-sided"
    notes = [
        f"{TEST_LABELS.get(plan.test, plan.test)}, {sided}, at alpha {plan.alpha:g}, of {second} against "
        f"{first} on {measure}; {plan.replications} simulated studies per count, each of the study's "
        "Latin-square rows in enrolment order."
    ]
    description = (plan.sample or {}).get("description")
    if plan.effect == PowerPlan.Effect.SPECIFIED:
        difference, spread = plan.specified_effect
        notes.append(
            f"Specified effect: {second} minus {first} = {_num(difference, 'g')}, the participants' paired "
            f"differences spread {_num(spread, 'g')} (standard deviation; effect size d = "
            f"{_num(difference / spread, '.3g')})."
        )
    elif description:
        notes.append(
            f"From {plan.sample.get('source', 'the pilot')} ({description['participants']} participants, "
            f"{description['sessions']} sessions): {second} minus {first} = "
            f"{_num(description['difference'])} "
            f"(additive model of participant, scenario and system; the participants' raw paired differences "
            f"average {_num(description['raw_difference'])} with standard deviation "
            f"{_num(description['spread'])}). "
            "Participants, scenarios and residuals are resampled; the power is that of finding a true "
            "difference of this size."
        )
    pilot = (plan.sample or {}).get("pilot")
    if plan.effect == PowerPlan.Effect.SIMULATED and description:
        notes.append(_simulation_against_pilot(plan, description, pilot, first, second))
    if curve.simulation and description:
        number, simulated = curve.simulation
        gap = description["raw_difference"] - simulated["raw_difference"]
        larger = abs(description["raw_difference"]) > abs(simulated["raw_difference"])
        notes.append(
            f"Against the simulated searchers of plan #{number} ({second} minus {first} = "
            f"{_num(simulated['raw_difference'])}, spread {_num(simulated['spread'])}), the real sessions' "
            f"difference is {'larger' if larger else 'smaller'} "
            f"by {_num(abs(gap))} and their spread {_num(description['spread'])}."
        )
    if curve.complete:
        if curve.smallest is None:
            last = curve.points[-1] if curve.points else None
            notes.append(
                f"No count in the range reaches {_pct(plan.target)} power"
                + (f"; {last.n} participants reach {_num(last.power, '.2f')}." if last else ".")
            )
        else:
            surely = (
                f"; with the whole {LEVEL:.0%} Monte Carlo interval at or above it: {curve.smallest_surely}"
                if curve.smallest_surely
                else "; no count has its whole Monte Carlo interval above it"
            )
            notes.append(
                f"The smallest count reaching {_pct(plan.target)} power: {curve.smallest} participants"
                f"{surely}."
            )
        own = description and description.get("participants")
        at_own = next((p for p in curve.points if p.n == own), None)
        if at_own is not None:
            notes.append(
                f"With the pilot's own {own} participants: power {_num(at_own.power, '.2f')} "
                f"({LEVEL:.0%} Monte Carlo interval {_num(at_own.low, '.2f')} to {_num(at_own.high, '.2f')})."
            )
    if curve.closed_form:
        notes.append(_closed_form_note(plan, curve))
    return notes


def _closed_form_note(plan: PowerPlan, curve: PlanCurve) -> str:
    """Where the closed form's (dashed) curve reaches the target, and what it assumes of a pilot."""
    reach = (
        f"reaches {_pct(plan.target)} at {curve.closed_smallest} participants"
        if curve.closed_smallest
        else f"does not reach {_pct(plan.target)}"
    )
    given = (
        ""
        if plan.effect == PowerPlan.Effect.SPECIFIED
        else (
            " with the pilot's raw paired differences taken as normal (for comparison: the Monte Carlo "
            "curve resamples the pilot as it is)"
        )
    )
    return f"Closed form (noncentral t, dashed){given} {reach}."


def _effect_size(description: dict) -> float | None:
    spread = description.get("spread")
    return description["raw_difference"] / spread if spread and spread == spread and spread > 0 else None


def _simulation_against_pilot(
    plan: PowerPlan, simulated: dict, pilot: dict | None, first: str, second: str
) -> str:
    """How the simulated searchers' estimate of the effect differs from the real sessions' (the pilot's)."""
    strategy = (plan.sample or {}).get("strategy") or {}
    told = (
        f"Simulated searchers (queries {strategy.get('queries', 'scenario')}, stopping "
        f"{strategy.get('stopping', 'patience')}): {second} minus {first} = "
        f"{_num(simulated['raw_difference'])}, paired spread {_num(simulated['spread'])}"
    )
    d_sim = _effect_size(simulated)
    told += f" (d = {_num(d_sim, '.2f')})." if d_sim is not None else "."
    if not pilot:
        return told + " The study has no scored real sessions to compare them with yet."
    d_pilot = _effect_size(pilot)
    told += (
        f" The real sessions (scoring run {pilot['run']}, {pilot['participants']} participants) give "
        f"{_num(pilot['raw_difference'])}, spread {_num(pilot['spread'])}"
        + (f" (d = {_num(d_pilot, '.2f')})" if d_pilot is not None else "")
        + ": the simulation "
    )
    gap = simulated["raw_difference"] - pilot["raw_difference"]
    told += "overstates" if abs(simulated["raw_difference"]) > abs(pilot["raw_difference"]) else "understates"
    told += f" the difference by {_num(abs(gap))}"
    if d_sim is not None and d_pilot is not None:
        from ..lib.power import paired_t_smallest_n

        def needed(d):
            n = (
                paired_t_smallest_n(
                    d, 1.0, plan.target, alpha=plan.alpha, alternative=plan.alternative, largest=100_000
                )
                if d
                else None
            )
            return f"{n}" if n else "more than 100,000"

        told += (
            f"; by the closed form, {_pct(plan.target)} power needs {needed(d_pilot)} participants on the "
            f"real sessions' estimate and {needed(d_sim)} on the simulation's"
        )
    return told + "."


def plan_figure(plan: PowerPlan, curve: PlanCurve) -> dict:
    shapes, annotations = _target_marks(plan, curve)
    title = f"Power by number of participants: {SUMMARY_LABELS.get(plan.summary, plan.summary)}"
    # The legend beside the plot, clear of the title and of the axis titles (as on the dashboards).
    return title_and_legend_apart(
        {
            "data": _power_traces(curve),
            "layout": {
                "title": {"text": title},
                "xaxis": {"title": {"text": "participants"}},
                "yaxis": {"title": {"text": "power"}, "range": [0, 1.02]},
                "shapes": shapes,
                "annotations": annotations,
                "margin": {"t": 60},
            },
        }
    )


def _power_traces(curve: PlanCurve) -> list[dict]:
    """The Monte Carlo power with its intervals, and the closed form's curve when the plan has one."""
    xs = [p.n for p in curve.points]
    ys = [p.power for p in curve.points]
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": f"Monte Carlo power ({LEVEL:.0%} interval)",
            "x": xs,
            "y": ys,
            # The hover rounds the power and its interval; the JSON and the CSV keep them whole.
            "customdata": [[p.low, p.high] for p in curve.points],
            "hovertemplate": "n %{x}: power %{y:.2f} (" + f"{LEVEL:.0%}" + " interval %{customdata[0]:.2f} "
            "to %{customdata[1]:.2f})<extra></extra>",
            "error_y": {
                "type": "data",
                "symmetric": False,
                "array": [p.high - p.power for p in curve.points],
                "arrayminus": [p.power - p.low for p in curve.points],
            },
        }
    ]
    if curve.closed_form:
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": "closed form (noncentral t)",
                "x": list(curve.closed_form),
                "y": list(curve.closed_form.values()),
                "line": {"dash": "dash"},
            }
        )
    return data


def _target_marks(plan: PowerPlan, curve: PlanCurve) -> tuple[list[dict], list[dict]]:
    """The lines and labels of the target power and, once found, of the smallest n that reaches it."""
    shapes = [
        {
            "type": "line",
            "xref": "paper",
            "x0": 0,
            "x1": 1,
            "y0": plan.target,
            "y1": plan.target,
            "line": {"dash": "dot", "width": 1},
        }
    ]
    annotations = [
        {
            "xref": "paper",
            "x": 0,
            "y": plan.target,
            "text": f"target {_pct(plan.target)}",
            "showarrow": False,
            "yshift": 10,
            "xanchor": "left",
        }
    ]
    if curve.smallest is not None:
        shapes.append(
            {
                "type": "line",
                "yref": "paper",
                "x0": curve.smallest,
                "x1": curve.smallest,
                "y0": 0,
                "y1": 1,
                "line": {"dash": "dot", "width": 1},
            }
        )
        annotations.append(
            {
                "x": curve.smallest,
                "yref": "paper",
                "y": 1,
                "text": f"n = {curve.smallest}",
                "showarrow": False,
                "yshift": 8,
            }
        )
    return shapes, annotations


def plan_rows(plan: PowerPlan, curve: PlanCurve) -> list[list]:
    rows = []
    for p in curve.points:
        closed = curve.closed_form.get(p.n)
        rows.append(
            [
                p.n,
                p.replications,
                p.rejections,
                f"{_num(p.power, '.4f')}",
                f"{_num(p.low, '.4f')}",
                f"{_num(p.high, '.4f')}",
                f"wilson {LEVEL:.0%}",
                "" if closed is None else f"{_num(closed, '.4f')}",
                plan.test,
                plan.summary,
                plan.effect,
                plan.alpha,
                plan.target,
            ]
        )
    return rows
