"""Power plans: create one (or reuse an identical one), start it, compute its chunks, close it.

A plan's Monte Carlo work is split into chunks of CHUNK_REPLICATIONS replications at one participant count;
each chunk is seeded by (plan seed, count, first replication), so it gives the same rejections on any worker
and when delivered twice, and it is stored by an upsert keyed by (plan, count, start). Progress is the sum of
the stored chunks' replications, kept on the plan. Tasks (tasks.py) only call these with ids.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from studies.models import Participant, Study, System
from studies.population import PopulationError, population_stamp

from ..lib.power import (
    ALTERNATIVES,
    TESTS,
    PowerError,
    SpecifiedEffect,
    simulated_rejections,
)
from ..lib.session import SUMMARIES
from ..models import PowerChunk, PowerPlan, ScoringRun
from . import simulate
from .designs import block_size, study_design
from .errors import PlanningError
from .pilots import pilot_description, pilot_model, pilot_population, pilot_sample, real_comparison

logger = logging.getLogger(__name__)

# Replications per chunk task: a few hundred keep a chunk at a second or less on a pilot and give two workers
# enough pieces (a 10-point curve of 500 replications is 20 chunks).
CHUNK_REPLICATIONS = 250
MAX_REPLICATIONS = 20_000
MAX_COUNTS = 40
MAX_PARTICIPANTS = 2_000
MAX_SIMULATED = 400  # simulated searchers in a pool (about 0.2 s of searching per session)
START_TASK = "scoring.planning.tasks.power_plan_start_task"


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise PlanningError(message)


def _counts(counts: Sequence[int]) -> list[int]:
    values = sorted({int(n) for n in counts})
    _check(bool(values), "counts: give at least one participant count")
    _check(len(values) <= MAX_COUNTS, f"counts: at most {MAX_COUNTS} participant counts, got {len(values)}")
    _check(values[0] >= 2, f"counts: every count must be at least 2 participants, got {values[0]}")
    _check(
        values[-1] <= MAX_PARTICIPANTS, f"counts: at most {MAX_PARTICIPANTS} participants, got {values[-1]}"
    )
    return values


def pilot_run(study: Study, run: ScoringRun | None) -> ScoringRun:
    """The run whose scores a pilot plan resamples: the one given (it must be the study's), else the
    default."""
    run = run or ScoringRun.objects.filter(study=study, is_default=True).first()
    if run is None or run.study_id != study.pk:
        raise PlanningError(
            "run: the study has no scoring run to take a pilot from; score its sessions first"
        )
    _check(run.status == ScoringRun.Status.DONE, f"run: scoring run {run.pk} is {run.status}, not done")
    return run


def _simulated_check(
    study: Study,
    run: ScoringRun | None,
    participants: int,
    strategy: Mapping | None,
    n_scenarios: int,
    n_systems: int,
) -> tuple[ScoringRun | None, int, dict]:
    """What a simulated plan needs: a collection, a 0..n grade scale, reference judgments to judge by, a valid
    strategy and a pool size; the scoring parameters are the run's (the default run's, or the defaults)."""
    from studies.simulation.searchers import Strategy, StrategyError, misjudge_rate

    try:
        parsed = Strategy.from_dict(strategy)
        if parsed.agreement is not None:  # reachable on every topic's reference grades?
            grades, _ = simulate.reference_grades(study)
            for topic in study.scenarios.values_list("topic_id", flat=True):
                misjudge_rate(
                    parsed.agreement, list(grades.get(topic, {}).values()), max(study.grade_values())
                )
    except (StrategyError, TypeError, ValueError) as exc:
        raise PlanningError(str(exc)) from None  # the message starts with the parameter's name
    # Sixteen blocks by default (128 in a 4 x 2 design): the pool's own estimate of the effect is a sample
    # too, and four blocks (32) gave effect sizes from 0.16 to 0.43 on the demo with different seeds.
    participants = int(participants or min(MAX_SIMULATED, 16 * block_size(n_scenarios, n_systems)))
    _check(
        2 <= participants <= MAX_SIMULATED,
        f"simulated_participants: between 2 and {MAX_SIMULATED}, got {participants}",
    )
    _check(
        study.collection_id is not None,
        "effect: the study has no collection for simulated searchers to search",
    )
    scale = study.grade_values()
    _check(scale == list(range(len(scale))), "effect: simulated searchers need a grade scale 0..n")
    _check(
        study.reference_versions.exists(),
        "effect: simulated searchers judge by the reference judgments, and the study has none yet",
    )
    if run is not None:
        _check(
            run.study_id == study.pk and run.status == ScoringRun.Status.DONE,
            "run: the scoring parameters must come from a finished run of the study",
        )
    else:
        run = ScoringRun.objects.filter(study=study, is_default=True, status=ScoringRun.Status.DONE).first()
    return run, participants, {"strategy": asdict(parsed)}


def _key(payload: dict) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def power_plan_create(
    *,
    study: Study,
    first_system: System,
    second_system: System,
    counts: Sequence[int],
    created_by=None,
    label: str = "",
    summary: str = "normalized_final",
    test: str = "paired_t",
    alternative: str = "two-sided",
    effect: str = PowerPlan.Effect.SPECIFIED,
    difference: float | None = None,
    spread: float | None = None,
    between: float = 0.0,
    run: ScoringRun | None = None,
    replications: int = 500,
    alpha: float = 0.05,
    target: float = 0.8,
    seed: int = 2026,
    simulated_participants: int = 0,
    strategy: Mapping | None = None,
    population: str | None = None,
) -> tuple[PowerPlan, bool]:
    """Create a plan and queue it on commit, or return the plan already made with the same parameters on the
    same data (reused=True). PlanningError names the field that is wrong; nothing is written then."""
    _check_choices(summary=summary, test=test, alternative=alternative, effect=effect)
    population = _population_code(study, population)
    _check_ranges(
        study, first_system, second_system, replications, alpha=alpha, target=target, between=between
    )
    counts = _counts(counts)
    design, scenario_ids, system_ids = study_design(study, counts[-1])
    first, second = system_ids.index(first_system.pk), system_ids.index(second_system.pk)
    data: dict = {"scenarios": scenario_ids, "systems": system_ids}
    sample: dict = {}
    if effect == PowerPlan.Effect.SPECIFIED:
        _specified_check(difference, spread, first=first, second=second, between=between)
        run, simulated_participants, population = None, 0, None
    elif effect == PowerPlan.Effect.PILOT:
        data["population"], data["population_stamp"] = population, population_stamp(study)  # members move
        run = _pilot_check(study, run, summary, system_ids, first=first, second=second, data=data)
        difference, spread, simulated_participants = None, None, 0
    else:
        run, simulated_participants, sample = _simulated_check(
            study, run, simulated_participants, strategy, len(scenario_ids), len(system_ids)
        )
        difference = spread = None
        _simulated_data(study, run, simulated_participants, sample, data=data)
    # What the plan computes and from which data: an identical plan that has not failed is reused.
    values = {
        "summary": summary,
        "test": test,
        "alternative": alternative,
        "effect": effect,
        "difference": difference,
        "spread": spread,
        "between": between,
        "counts": counts,
        "replications": int(replications),
        "alpha": alpha,
        "target": target,
        "seed": int(seed),
        "population": population,
    }
    key = _key(
        {"study": study.pk, "first": first_system.pk, "second": second_system.pk, "data": data, **values}
    )
    return _plan_reused_or_created(
        study=study,
        key=key,
        values=values,
        label=label,
        created_by=created_by,
        first_system=first_system,
        second_system=second_system,
        run=run,
        sample=sample,
        simulated_participants=simulated_participants,
    )


def _population_code(study: Study, text: str | None) -> str:
    """The population a pilot resamples, as text; PlanningError names the field, whichever part is wrong."""
    try:
        return pilot_population(study, text).code()
    except PopulationError as exc:
        raise PlanningError(f"population: {str(exc).removeprefix('population: ')}") from None


def _plan_reused_or_created(
    *,
    study: Study,
    key: str,
    values: dict,
    label: str,
    created_by,
    first_system: System,
    second_system: System,
    run: ScoringRun | None,
    sample: dict,
    simulated_participants: int,
) -> tuple[PowerPlan, bool]:
    """The plan with this key that has not failed (reused=True), or a new one queued on commit."""
    existing = PowerPlan.objects.filter(study=study, key=key).exclude(status=PowerPlan.Status.FAILED).first()
    if existing is not None:
        return existing, True
    with transaction.atomic():
        plan = PowerPlan.objects.create(
            study=study,
            label=label,
            first_system=first_system,
            second_system=second_system,
            run=run,
            key=key,
            created_by=created_by,
            sample=sample,
            simulated_participants=simulated_participants,
            progress_total=len(values["counts"]) * values["replications"] + simulated_participants,
            **values,
        )
        _queue_start(plan.pk)
    return plan, False


def _check_choices(*, summary: str, test: str, alternative: str, effect: str) -> None:
    """Refuse a plan's options that name nothing (PlanningError naming the field)."""
    _check(summary in SUMMARIES, f"summary: {summary!r} is not one of {', '.join(SUMMARIES)}")
    _check(test in TESTS, f"test: {test!r} is not one of {', '.join(TESTS)}")
    _check(
        alternative in ALTERNATIVES, f"alternative: {alternative!r} is not one of {', '.join(ALTERNATIVES)}"
    )
    _check(
        effect in PowerPlan.Effect.values,
        f"effect: {effect!r} is not one of {', '.join(PowerPlan.Effect.values)}",
    )


def _check_ranges(
    study: Study,
    first_system: System,
    second_system: System,
    replications: int,
    *,
    alpha: float,
    target: float,
    between: float,
) -> None:
    """Refuse systems of another study or twice the same, and numbers out of range (PlanningError)."""
    _check(
        first_system.study_id == study.pk and second_system.study_id == study.pk,
        "systems: both systems must be the study's",
    )
    _check(first_system.pk != second_system.pk, "systems: choose two different systems")
    _check(1 <= int(replications) <= MAX_REPLICATIONS, f"replications: between 1 and {MAX_REPLICATIONS}")
    _check(0 < alpha < 1, "alpha: between 0 and 1")
    _check(0 < target < 1, "target: the target power is between 0 and 1")
    _check(between >= 0, "between: a standard deviation is at least 0")


def _specified_check(
    difference: float | None, spread: float | None, *, first: int, second: int, between: float
) -> None:
    """Refuse a specified effect the library could not simulate."""
    if difference is None:
        raise PlanningError("difference: a specified effect needs the difference")
    if spread is None or not spread > 0:
        raise PlanningError("spread: a specified effect needs a spread > 0")
    try:
        SpecifiedEffect(difference=difference, spread=spread, first=first, second=second, between=between)
    except PowerError as exc:
        raise PlanningError(str(exc)) from None


def _pilot_check(
    study: Study,
    run: ScoringRun | None,
    summary: str,
    system_ids: list[int],
    *,
    first: int,
    second: int,
    data: dict,
) -> ScoringRun:
    """The pilot run, checked now rather than in a worker; its id and generation go into the plan's data."""
    run = pilot_run(study, run)
    try:  # refuse a pilot that cannot be resampled now, not in a worker
        sample = pilot_sample(run, summary, system_ids, data.get("population"))
        pilot_description(sample, first, second, len(system_ids))
    except PowerError as exc:
        raise PlanningError(f"pilot: {exc}") from None
    data["run"], data["generation"] = run.pk, run.generation
    return run


def _simulated_data(
    study: Study, run: ScoringRun | None, participants: int, sample: dict, *, data: dict
) -> None:
    """What a simulated plan's searchers depend on, into the plan's data (and so its key)."""
    version = study.reference_versions.order_by("-number").first()
    assert version is not None  # _simulated_check refused a study without reference judgments
    data.update(
        collection=study.collection_id,
        reference=version.pk,
        participants=participants,
        strategy=sample["strategy"],
        scoring=simulate.run_options(run),
        systems=list(study.systems.order_by("id").values_list("pk", "backend", "config")),
    )


def _queue_start(plan_id: int) -> None:
    """Queue the plan's start on commit. The task is taken from Celery's registry by its name rather than
    imported, so this module and tasks.py (which calls it back) never import each other."""
    from sessionlab.celery import app
    from sessionlab.queueing import delay_on_commit

    if START_TASK not in app.tasks:
        app.loader.import_default_modules()  # as a worker does: the apps' tasks and CELERY_IMPORTS
    power_plan_start_task = app.tasks[START_TASK]

    def not_queued(exc):
        power_plan_fail(plan_id=plan_id, message=f"not queued: the broker was unreachable ({exc}); ask again")

    delay_on_commit(power_plan_start_task, plan_id, on_failure=not_queued)


def power_plan_start(*, plan_id: int) -> list[tuple[int, int, int]] | None:
    """Fix what the plan resamples (the pilot's sessions as they are now), clear any earlier chunks, mark it
    running; return its chunks as (count, first replication, replications). None if the plan is gone."""
    plan = PowerPlan.objects.filter(pk=plan_id).select_related("study", "run").first()
    if plan is None:
        return None
    _, _, system_ids = study_design(plan.study, max(plan.counts))
    sample: dict = {}
    if plan.effect in (PowerPlan.Effect.PILOT,):
        if plan.run is None:
            raise PlanningError("run: the pilot's scoring run was deleted")
        sample = pilot_sample(plan.run, plan.summary, system_ids, plan.population)
        first, second = _plan_systems(plan, system_ids)
        sample["description"] = pilot_description(sample, first, second, len(system_ids))
    chunks = [
        (n, start, min(CHUNK_REPLICATIONS, plan.replications - start))
        for n in plan.counts
        for start in range(0, plan.replications, CHUNK_REPLICATIONS)
    ]
    with transaction.atomic():
        PowerChunk.objects.filter(plan_id=plan_id).delete()
        PowerPlan.objects.filter(pk=plan_id).update(
            status=PowerPlan.Status.RUNNING,
            error="",
            sample=sample,
            progress_done=0,
            progress_total=len(plan.counts) * plan.replications,
            started_at=timezone.now(),
            finished_at=None,
        )
    return chunks


def power_pool_start(*, plan_id: int) -> list[tuple[int, int]] | None:
    """Begin a simulated plan: clear earlier results and return the pool's chunks as (chunk, participants), a
    block of the design each. None for a plan that does not simulate (or is gone)."""
    plan = PowerPlan.objects.filter(pk=plan_id).select_related("study").first()
    if plan is None or plan.effect != PowerPlan.Effect.SIMULATED:
        return None
    study = plan.study
    block = block_size(study.scenarios.filter(practice=False).count(), study.systems.count())
    total = plan.simulated_participants
    chunks = [(i, min(block, total - i * block)) for i in range(math.ceil(total / block))]
    with transaction.atomic():
        PowerChunk.objects.filter(plan_id=plan_id).delete()
        PowerPlan.objects.filter(pk=plan_id).update(
            status=PowerPlan.Status.RUNNING,
            error="",
            sample={"strategy": plan.sample.get("strategy", {}), "pool": {}},
            progress_done=0,
            progress_total=total + len(plan.counts) * plan.replications,
            started_at=timezone.now(),
            finished_at=None,
        )
    return chunks


def power_pool_chunk(*, plan_id: int, chunk: int, participants: int) -> int:
    """Simulate one chunk of the pool (rolled back but for its scores and figures) and keep it on the plan, by
    chunk number: a re-delivered chunk replaces itself. Returns the sessions kept."""
    plan = PowerPlan.objects.filter(pk=plan_id).select_related("study", "run").first()
    if plan is None or plan.status == PowerPlan.Status.FAILED:
        return 0
    try:
        result = simulate.pool_chunk_simulate(plan=plan, chunk=chunk, participants=participants)
    except (PowerError, PlanningError, ValueError) as exc:
        logger.warning("power plan %s: simulation failed: %s", plan_id, exc)
        power_plan_fail(plan_id=plan_id, message=f"simulation: {exc}")
        return 0
    result["participants"] = participants
    with transaction.atomic():
        locked = PowerPlan.objects.select_for_update().get(pk=plan_id)
        locked.sample.setdefault("pool", {})[str(chunk)] = result
        locked.progress_done = sum(c["participants"] for c in locked.sample["pool"].values())
        locked.save(update_fields=["sample", "progress_done"])
    return len(result["values"])


def power_pool_finish(*, plan_id: int) -> list[tuple[int, int, int]] | None:
    """Join the pool's chunks into the plan's sample, describe it (and the study's pilot, if it has one, for
    the comparison), put the calibration report beside it, and return the power chunks."""
    plan = PowerPlan.objects.filter(pk=plan_id).select_related("study").first()
    if plan is None or plan.status == PowerPlan.Status.FAILED:
        return None
    _, _, system_ids = study_design(plan.study, max(plan.counts))
    first, second = _plan_systems(plan, system_ids)
    pool = [plan.sample["pool"][key] for key in sorted(plan.sample.get("pool", {}), key=int)]
    sample = {
        "strategy": plan.sample.get("strategy", {}),
        "values": [],
        "participant": [],
        "scenario": [],
        "system": [],
    }
    behaviour: dict[str, list[float]] = {name: [] for name in simulate.BEHAVIOUR}
    agreement = [0, 0]
    for part in pool:
        for name in ("values", "participant", "scenario", "system"):
            sample[name] += part[name]
        for name in behaviour:
            behaviour[name] += part["behaviour"].get(name, [])
        agreement = [agreement[0] + part["agreement"][0], agreement[1] + part["agreement"][1]]
    sample["source"] = f"{plan.simulated_participants} simulated searchers"
    try:
        sample["description"] = pilot_description(sample, first, second, len(system_ids))
    except PowerError as exc:
        power_plan_fail(plan_id=plan_id, message=f"the simulated pool cannot be resampled: {exc}")
        return None
    sample["calibration"] = {"simulated": simulate.behaviour_summary(behaviour, agreement)}
    real_comparison(plan, sample, system_ids, first, second)
    PowerPlan.objects.filter(pk=plan_id).update(sample=sample, progress_done=plan.simulated_participants)
    return [
        (n, start, min(CHUNK_REPLICATIONS, plan.replications - start))
        for n in plan.counts
        for start in range(0, plan.replications, CHUNK_REPLICATIONS)
    ]


def power_plans_withdraw(*, study_id: int, participant_id: int, session_ids: Sequence[int]) -> list[int]:
    """After a participant's withdrawal (their session scores already deleted from every run), the plans
    whose stored data came from their sessions: a pilot plan that resampled them is started again on what its
    run holds now (its chunks and sample cleared at once, so no stored figure includes them); a finished
    simulated plan's comparison with the real sessions and pilot is computed again (when the participant had
    a session). Returns the plans' ids."""
    changed = []
    # A pilot's sample labels its participants by code (pilots.pilot_sample); plans stored before that, by id.
    labels = {
        str(participant_id),
        *Participant.objects.filter(pk=participant_id).values_list("code", flat=True),
    }
    for plan in PowerPlan.objects.filter(study_id=study_id).select_related("study").order_by("pk"):
        if plan.effect == PowerPlan.Effect.PILOT and labels.intersection(plan.sample.get("participant", [])):
            PowerChunk.objects.filter(plan=plan).delete()
            PowerPlan.objects.filter(pk=plan.pk).update(
                status=PowerPlan.Status.PENDING,
                sample={},
                error="",
                progress_done=0,
                started_at=None,
                finished_at=None,
            )
            _queue_start(plan.pk)
            changed.append(plan.pk)
        elif plan.effect == PowerPlan.Effect.SIMULATED and session_ids and "calibration" in plan.sample:
            try:
                _, _, system_ids = study_design(plan.study, max(plan.counts))
                first, second = _plan_systems(plan, system_ids)
            except PlanningError:
                continue  # a system deleted since: the page says so already, nothing to recompute
            sample = dict(plan.sample)
            real_comparison(plan, sample, system_ids, first, second)
            PowerPlan.objects.filter(pk=plan.pk).update(sample=sample)
            changed.append(plan.pk)
    return changed


def _plan_systems(plan: PowerPlan, system_ids: Sequence[int]) -> tuple[int, int]:
    """The design indices of the plan's two systems; PlanningError if one was deleted since (SET_NULL)."""
    if plan.first_system_id is None or plan.second_system_id is None:
        raise PlanningError("systems: a system of the plan was deleted")
    return system_ids.index(plan.first_system_id), system_ids.index(plan.second_system_id)


def plan_sampler(plan: PowerPlan, system_ids: Sequence[int]):
    """The plan's sampler and the design indices of its two systems."""
    first, second = _plan_systems(plan, system_ids)
    if plan.effect == PowerPlan.Effect.SPECIFIED:
        difference, spread = plan.specified_effect
        return (
            SpecifiedEffect(
                difference=difference,
                spread=spread,
                first=first,
                second=second,
                between=plan.between,
            ),
            first,
            second,
        )
    return pilot_model(plan.sample, len(system_ids)), first, second


def power_chunk_compute(*, plan_id: int, count: int, start: int, replications: int) -> int:
    """Simulate one chunk and upsert its rejections; returns them (0 when the plan is gone or failed)."""
    plan = PowerPlan.objects.filter(pk=plan_id).select_related("study").first()
    if plan is None or plan.status == PowerPlan.Status.FAILED:
        return 0
    try:
        design, _, system_ids = study_design(plan.study, max(plan.counts))
        sampler, first, second = plan_sampler(plan, system_ids)
        hits = simulated_rejections(
            sampler,
            design,
            count,
            replications,
            first=first,
            second=second,
            test=plan.test,
            alpha=plan.alpha,
            alternative=plan.alternative,
            seed=(plan.seed, count, start),
        )
    except (PowerError, PlanningError) as exc:
        logger.warning("power plan %s failed: %s", plan_id, exc)
        power_plan_fail(plan_id=plan_id, message=str(exc))
        return 0
    with transaction.atomic():
        PowerChunk.objects.bulk_create(
            [
                PowerChunk(
                    plan_id=plan_id, count=count, start=start, replications=replications, rejections=hits
                )
            ],
            update_conflicts=True,
            unique_fields=["plan", "count", "start"],
            update_fields=["replications", "rejections"],
        )
        done = PowerChunk.objects.filter(plan_id=plan_id).aggregate(total=Sum("replications"))["total"] or 0
        PowerPlan.objects.filter(pk=plan_id, status=PowerPlan.Status.RUNNING).update(
            progress_done=done + plan.simulated_participants
        )
    return hits


def power_plan_finish(*, plan_id: int) -> None:
    done = PowerChunk.objects.filter(plan_id=plan_id).aggregate(total=Sum("replications"))["total"] or 0
    pool = PowerPlan.objects.filter(pk=plan_id).values_list("simulated_participants", flat=True).first() or 0
    PowerPlan.objects.filter(pk=plan_id).exclude(status=PowerPlan.Status.FAILED).update(
        status=PowerPlan.Status.DONE, progress_done=done + pool, finished_at=timezone.now()
    )


def power_plan_fail(*, plan_id: int, message: str) -> None:
    PowerPlan.objects.filter(pk=plan_id).update(
        status=PowerPlan.Status.FAILED, error=message[:2000], finished_at=timezone.now()
    )
