"""The planner's simulated effect: simulated searchers work the study's design on its own systems and
collection, through the real services, and their sessions are scored with the plan's scoring parameters; then
everything they wrote is rolled back. Only the scores and the behaviour figures are kept (on the plan).

Simulating every replication's participants would take hours (a session costs about 0.2 s of searching and
logging), so the planner simulates a pool once (a few of the design's blocks, in chunks that run in parallel)
and resamples it as it resamples a pilot (scoring/lib/power.py, PilotModel).

Each chunk works in a shadow of the study, made inside the transaction that is rolled back: the same
scenarios, systems (configurations), grade scale, collection and latest reference judgments, so the real study
is never locked, enrolled into or announced to, and chunks never wait for each other."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping

from django.db import transaction
from django.db.models import Exists, Max, Min, OuterRef

from studies.models import Document, Event, Judgment, Query, ReferenceJudgment, SearchSession, Study

from ..models import PowerPlan, ScoringRun, SessionScore

BEHAVIOUR = {
    "queries": "queries per session",
    "depth": "scan depth (mean deepest rank viewed per query)",
    "seconds": "session time (seconds, first to last event on the participant's clock)",
    "judgments": "judgments per session",
}


class _RollBack(Exception):
    """Raised to roll back a simulation's transaction once its results are read."""


def reference_grades(study: Study) -> tuple[dict[str, dict[str, int]], object]:
    """{topic: {external id: grade}} of the study's latest reference version, and the version."""
    version = study.reference_versions.order_by("-number").first()
    grades: dict[str, dict[str, int]] = defaultdict(dict)
    if version is not None:
        for topic, doc, grade in ReferenceJudgment.objects.filter(version=version).values_list(
            "topic_id", "document__external_id", "grade"
        ):
            grades[topic][doc] = grade
    return dict(grades), version


def relevant_texts(study: Study, grades: Mapping[str, Mapping[str, int]]) -> dict[str, list[str]]:
    """The texts of each topic's relevant documents (reference grade > 0), for the "relevant" query
    strategy."""
    if study.collection_id is None:  # no collection, no texts (what the query below would find)
        return {topic: [] for topic in grades}
    wanted = {doc for judged in grades.values() for doc, grade in judged.items() if grade > 0}
    text_of = {
        external: f"{title} {text}"
        for external, title, text in Document.objects.filter(
            collection_id=study.collection_id, external_id__in=wanted
        ).values_list("external_id", "title", "text")
    }
    return {
        topic: [text_of[d] for d, g in judged.items() if g > 0 and d in text_of]
        for topic, judged in grades.items()
    }


def studies_services():
    """(studies' design services, its reference-version writer), imported when a plan runs, not at
    start-up."""
    from studies.assessment.references import reference_version_create
    from studies.design import services as design

    return design, reference_version_create


def _shadow(study: Study, name: str, version) -> Study:
    """A copy of the study's design to simulate in (inside the rolled-back transaction)."""
    design, reference_version_create = studies_services()

    labels = list(study.grade_levels.order_by("value").values_list("label", flat=True))
    shadow = design.study_create(
        owner=study.owner,
        name=name,
        grade_labels=labels,
        collection=study.collection,
        consent_text=study.consent_text or "Simulated.",
        consent_version=study.consent_version,
        status="open",  # a sandbox enrolled at once (and rolled back), never a researcher's draft
    )
    # The scored scenarios only: a practice task is never scored, so the plan (study_design) leaves it out.
    for scenario in study.scenarios.filter(practice=False).order_by("id"):
        design.scenario_add(
            study=shadow,
            code=scenario.code,
            title=scenario.title,
            text=scenario.text,
            topic_id=scenario.topic_id,
        )
    for system in study.systems.order_by("id"):
        design.system_add(
            study=shadow, code=system.code, name=system.name, backend=system.backend, config=system.config
        )
    if version is not None:
        reference_version_create(
            study=shadow,
            note="simulation",
            judgments=(
                ReferenceJudgment(
                    topic_id=j.topic_id, document_id=j.document_id, grade=j.grade, source=j.source
                )
                for j in ReferenceJudgment.objects.filter(version=version)
            ),
        )
    return shadow


def run_options(run: ScoringRun | None) -> dict:
    """The scoring parameters of the plan's run (the study's default weights and the paper's options if
    none)."""
    if run is None:
        return {}
    return {
        "weights": run.weights,
        "b": run.b,
        "bq": run.bq,
        "top": run.top,
        "formulation": run.formulation,
        "gain": run.gain,
        "duplicates": run.duplicates,
        "short_lists": run.short_lists,
        "scan": run.scan,
    }


def pool_chunk_simulate(*, plan: PowerPlan, chunk: int, participants: int) -> dict:
    """Simulate `participants` searchers (the design's first rows) with the plan's strategy, score their
    sessions with the plan's parameters, read the scores and the behaviour figures, and roll everything
    back."""
    from studies.simulation.searchers import Strategy, participants_simulate_with

    from .. import services as scoring

    study = plan.study
    strategy = Strategy.from_dict(plan.sample.get("strategy"))
    grades, version = reference_grades(study)
    texts = relevant_texts(study, grades) if strategy.queries == "relevant" else {}
    system_index = {
        code: i for i, code in enumerate(study.systems.order_by("id").values_list("code", flat=True))
    }
    out: dict = {}
    try:
        with transaction.atomic():
            shadow = _shadow(study, f"{study.name} (simulation {plan.pk}.{chunk})", version)
            people = studies_services()[0].participants_enrol(study=shadow, count=participants)
            participants_simulate_with(
                participants=people,
                reference=grades,
                strategy=strategy,
                relevant_texts=texts,
                seed=plan.seed * 1000 + chunk,
            )
            run = scoring.scoring_run_create(study=shadow, **run_options(plan.run))
            started = scoring.scoring_pass_start(run_id=run.pk)
            assert started is not None  # None only for a run that is gone, and this one was just made
            pass_number, chunks = started
            for ids in chunks:
                scoring.scoring_chunk_score(run_id=run.pk, pass_number=pass_number, session_ids=ids)
            rows = list(
                SessionScore.objects.filter(run=run, unjudged=False)
                .order_by("session_id")
                .values_list(plan.summary, "participant__code", "scenario__code", "system__code")
            )
            out = {
                "values": [float(r[0]) for r in rows],
                "participant": [f"{chunk}-{r[1]}" for r in rows],
                "scenario": [r[2] for r in rows],
                "system": [system_index[r[3]] for r in rows],
                "behaviour": session_behaviour(
                    SearchSession.objects.filter(assignment__participant__study=shadow).values_list(
                        "pk", flat=True
                    )
                ),
                "agreement": judgment_agreement(shadow, grades),
            }
            raise _RollBack
    except _RollBack:
        pass
    return out


def scorable_sessions(study: Study) -> Iterable[int]:
    """The study's real sessions that a run scores: ended (not withdrawn) with at least one query, not a
    practice task's."""
    return (
        SearchSession.objects.filter(
            Exists(Query.objects.filter(session_id=OuterRef("pk"))),
            assignment__participant__study=study,
            ended_at__isnull=False,
            assignment__scenario__practice=False,
        )
        .exclude(end_reason=SearchSession.EndReason.WITHDRAWN)
        .values_list("pk", flat=True)
    )


def session_behaviour(session_ids: Iterable[int]) -> dict[str, list[float]]:
    """Per session: queries, mean scan depth (the scan marks), seconds from the first to the last event on the
    participant's clock, judgments. One list per figure, sessions in id order; a session without scan marks or
    client times has no depth or time."""
    ids = sorted(set(session_ids))
    queries: defaultdict[int, int] = defaultdict(int)
    marks: defaultdict[int, list[int]] = defaultdict(list)
    for session_id, mark in Query.objects.filter(session_id__in=ids).values_list(
        "session_id", "scan_mark_rank"
    ):
        queries[session_id] += 1
        if mark is not None:
            marks[session_id].append(mark)
    judged: defaultdict[int, int] = defaultdict(int)
    for session_id in Judgment.objects.filter(session_id__in=ids).values_list("session_id", flat=True):
        judged[session_id] += 1
    spans = {
        row["session_id"]: (row["last"] - row["first"]).total_seconds()
        for row in Event.objects.filter(session_id__in=ids, client_time__isnull=False)
        .values("session_id")
        .annotate(first=Min("client_time"), last=Max("client_time"))
    }
    return {
        "queries": [float(queries[s]) for s in ids if queries[s]],
        "depth": [sum(marks[s]) / len(marks[s]) for s in ids if marks[s]],
        "seconds": [spans[s] for s in ids if s in spans and queries[s]],
        "judgments": [float(judged[s]) for s in ids if queries[s]],
    }


def judgment_agreement(study: Study, grades: Mapping[str, Mapping[str, int]]) -> list[int]:
    """[equal, compared]: the study's judgments of documents the reference grades, and how many equal it."""
    equal = compared = 0
    for topic, doc, grade in Judgment.objects.filter(
        session__assignment__participant__study=study
    ).values_list("session__assignment__scenario__topic_id", "document__external_id", "grade"):
        reference = grades.get(topic, {}).get(doc)
        if reference is not None:
            compared += 1
            equal += reference == grade
    return [equal, compared]


def behaviour_summary(figures: Mapping[str, list[float]], agreement: list[int] | None = None) -> dict:
    """n, mean, standard deviation and median of each figure; and the share of judgments equal to the
    reference."""
    summary = {}
    for name in BEHAVIOUR:
        values = figures.get(name) or []
        summary[name] = {
            "n": len(values),
            "mean": statistics.fmean(values) if values else None,
            "sd": statistics.stdev(values) if len(values) > 1 else None,
            "median": statistics.median(values) if values else None,
        }
    if agreement is not None:
        equal, compared = agreement
        summary["agreement"] = {"n": compared, "mean": equal / compared if compared else None}
    return summary


def real_behaviour(study: Study) -> dict:
    grades, _ = reference_grades(study)
    return behaviour_summary(session_behaviour(scorable_sessions(study)), judgment_agreement(study, grades))
