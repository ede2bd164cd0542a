"""A pilot's sample for a power plan: a scoring run's scored sessions as plain lists, the model fitted to
them, and what the planner page says about them."""

from __future__ import annotations

from collections.abc import Sequence

from studies.models import Study
from studies.population import Population, population_q, study_population

from ..lib.power import PilotModel, PowerError
from ..models import PowerPlan, ScoringRun, SessionScore
from . import simulate


def pilot_population(study: Study, text: str | None) -> Population:
    """Whose sessions a pilot resamples (and a simulated plan's real pilot is compared with): the population
    asked for (studies.population's text), else the study's default. PopulationError names what is wrong."""
    return Population.parse(text) if text and text.strip() else study_population(study)


def pilot_sample(
    run: ScoringRun, summary: str, system_ids: Sequence[int], population: str | None = None
) -> dict:
    """The run's scored sessions in the population (judged scenarios only, as the dashboards count them) as
    plain lists; every scored session without one (a plan from before populations)."""
    scores = SessionScore.objects.filter(run=run, unjudged=False, system_id__in=list(system_ids))
    chosen = Population.parse(population) if population else None
    if chosen is not None:
        scores = scores.filter(population_q(chosen, "participant__"))
    # Labelled and ordered by the participants' and scenarios' codes, never by database ids: the resampling
    # draws by position in the sorted labels, so ids ("9" < "10" as text) would make a plan depend on what the
    # database had held before (the demo printed power 0.18 on one machine, 0.20 on another).
    rows = list(
        scores.order_by("participant__code", "session__assignment__position", "session_id").values_list(
            summary, "participant__code", "scenario__code", "system_id"
        )
    )
    index = {pk: i for i, pk in enumerate(system_ids)}
    return {
        "source": f"scoring run {run.pk}"
        + (f", population {chosen.label()} (population={chosen.code()})" if chosen else ""),
        "population": chosen.code() if chosen else None,
        "run": run.pk,
        "generation": run.generation,
        "values": [float(r[0]) for r in rows],
        "participant": [str(r[1]) for r in rows],
        "scenario": [str(r[2]) for r in rows],
        "system": [index[r[3]] for r in rows],
    }


def pilot_model(sample: dict, systems: int) -> PilotModel:
    return PilotModel.fit(
        sample["values"], sample["participant"], sample["scenario"], sample["system"], systems=systems
    )


def pilot_description(sample: dict, first: int, second: int, systems: int) -> dict:
    """What the page says about a pilot: its size, the difference it estimates and the spread of the
    participants' paired differences (the quantities the closed form would need)."""
    model = pilot_model(sample, systems)
    by_person: dict[str, dict[int, list[float]]] = {}
    for value, person, system in zip(sample["values"], sample["participant"], sample["system"], strict=True):
        by_person.setdefault(person, {}).setdefault(system, []).append(value)
    diffs = [
        sum(s[second]) / len(s[second]) - sum(s[first]) / len(s[first])
        for s in by_person.values()
        if s.get(first) and s.get(second)
    ]
    mean = sum(diffs) / len(diffs) if diffs else float("nan")
    spread = (
        (sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)) ** 0.5 if len(diffs) > 1 else float("nan")
    )
    return {
        "participants": len(by_person),
        "sessions": len(sample["values"]),
        "paired": len(diffs),
        "difference": model.difference(first, second),
        "raw_difference": mean,
        "spread": spread,
        "residual_sd": float(model.residuals.std()),
    }


def real_comparison(
    plan: PowerPlan, sample: dict, system_ids: Sequence[int], first: int, second: int
) -> None:
    """What a simulated plan compares its pool with, into `sample`: the real sessions' behaviour and, when
    the study has a done default run, the real pilot of the plan's population."""
    sample.setdefault("calibration", {})["real"] = simulate.real_behaviour(plan.study)
    pilot = ScoringRun.objects.filter(
        study=plan.study, is_default=True, status=ScoringRun.Status.DONE
    ).first()
    if pilot is not None:  # the real pilot of the plan's population, for the comparison
        real = pilot_sample(pilot, plan.summary, system_ids, plan.population)
        try:
            sample["pilot"] = dict(pilot_description(real, first, second, len(system_ids)), run=pilot.pk)
        except PowerError:
            sample["pilot"] = None  # too few real sessions to compare with yet
