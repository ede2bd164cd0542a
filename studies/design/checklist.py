"""A study's set-up as a checklist: each step says what is still missing before participants can be
enrolled (docs/setting-up-a-study.md). A read: a handful of queries, whatever the study's size."""

from __future__ import annotations

from dataclasses import dataclass, field

from sessionlab.plurals import counted
from studies.design.collection_judgments import collection_reference_missing
from studies.design.orders import counterbalanced, design_summary
from studies.models import Study, System
from studies.questionnaires.items import DEFAULT_POST_TASK_QUESTIONNAIRE, DEFAULT_QUESTIONNAIRE, usable_items
from studies.search.generative import retrieval_problem
from studies.search.index_versions import CURRENT, MISSING, STALE
from studies.search.systems import collection_index_states, system_config_problem, system_configuration

LOCKED = (
    "Fixed since the first enrolment ({at:%Y-%m-%d %H:%M}): every participant's order was built from it, "
    "and changing it would break the Latin square's balance."
)


@dataclass
class Step:
    key: str
    title: str
    done: bool
    summary: str
    missing: list[str] = field(default_factory=list)
    required: bool = True  # an optional step never holds back the enrolment
    locked: str = ""  # why it can no longer change, when it cannot


def study_checklist(*, study: Study) -> list[Step]:
    locked = LOCKED.format(at=study.design_locked_at) if study.design_locked_at else ""
    systems = list(study.systems.order_by("id"))
    scenarios = list(study.scenarios.order_by("id"))
    indexes = collection_index_states(collection=study.collection) if study.collection is not None else {}
    return [
        _collection_step(study, locked),
        _systems_step(study, systems, indexes, locked),
        _scenarios_step(study, systems, scenarios, locked),
        _design_step(study, systems, scenarios, locked),
        _grades_step(study),
        _consent_step(study),
        _questionnaires_step(study),
        _time_step(study),
    ]


def _collection_step(study: Study, locked: str) -> Step:
    missing = []
    collection = study.collection  # no query when none is chosen
    if collection is None:
        missing.append("Choose the collection participants search (or upload one).")
        summary = "None chosen."
    else:
        documents = collection.documents.count()
        summary = f"“{collection.name}”, {counted(documents, 'document')}."
        if not documents:
            missing.append("The collection has no documents.")
        # True only once the collection's judgments are a reference version (a study made on the
        # New-study form had none, and this step still said done).
        waiting = collection_reference_missing(study=study)
        if waiting:
            missing.append(
                f"The collection's {counted(waiting, 'judgment')} {'is' if waiting == 1 else 'are'} not the "
                "study's reference yet: add them from the study page (or manage.py repair_reference)."
            )
    return Step("collection", "Collection", not missing, summary, missing, locked=locked)


def _systems_step(study: Study, systems: list[System], indexes: dict, locked: str) -> Step:
    """Each system's configuration must be usable, and a built-in one's index built (on some node: the
    database's record; this node's copy is only reported, it builds its own on its first search)."""
    missing, notes = [], []
    for system in systems:
        problem = system_config_problem(system.backend, system.config)
        if not problem and system.backend == System.Backend.GENERATIVE:
            problem = retrieval_problem(system)  # the system it retrieves with is another row of the study
        if problem:
            missing.append(f"System {system.code}: {problem}.")
        elif system.backend == System.Backend.BUILTIN and study.collection_id:
            configuration = system_configuration(system.config)
            state = indexes.get(configuration)
            if state is None or state.documents is None:
                missing.append(
                    f"System {system.code}: the index {configuration} of the collection is not built "
                    "yet on any server (it is built after an upload; or run manage.py build_index)."
                )
            elif state.here != CURRENT:
                notes.append(f"{configuration}: {_HERE[state.here]}")
    if not systems:
        missing.append("Add at least one system (two to compare them).")
    summary = ", ".join(f"{s.code} ({s.get_backend_display().lower()})" for s in systems) or "None yet."
    if notes:
        summary += " Index " + "; ".join(sorted(set(notes))) + "."
    return Step("systems", "Systems", not missing, summary, missing, locked=locked)


_HERE = {
    MISSING: "built, not yet copied to this server (it builds its own on its first search)",
    STALE: "a newer version is current; this server rebuilds its copy on its first search",
}


def _scenarios_step(study: Study, systems: list[System], scenarios: list, locked: str) -> Step:
    """At least one scenario; those without reference judgments are named (scores need them, but they may
    come later). Any number works with any number of systems (the design step says how they are shared)."""
    missing = []
    if not scenarios:
        missing.append("Add scenarios: pick them from the collection's topics, or write them.")
    judged = set()
    if scenarios:
        version = study.reference_versions.order_by("-number").first()
        if version is not None:
            judged = set(version.judgments.values_list("topic_id", flat=True).distinct())
    unjudged = [s.code for s in scenarios if s.topic_id not in judged]
    summary = f"{counted(len(scenarios), 'scenario')}." if scenarios else "None yet."
    if scenarios and unjudged:
        summary += (
            f" Without reference judgments yet: {', '.join(unjudged[:8])}{' …' if len(unjudged) > 8 else ''}"
            " (scores need them; they can come later, from expert assessment)."
        )
    return Step("scenarios", "Scenarios", not missing, summary, missing, locked=locked)


def _design_step(study: Study, systems: list[System], scenarios: list, locked: str) -> Step:
    """How participants meet the systems (design_summary), and practice scenarios; every scenario practice
    leaves nothing to balance."""
    summary = design_summary(study=study, scenarios=scenarios, systems=systems)
    missing = []
    if scenarios and not counterbalanced(scenarios):
        missing.append("Every scenario is marked practice: leave at least one as a scored task.")
    return Step("design", "Design", not missing, summary, missing, locked=locked)


def _grades_step(study: Study) -> Step:
    levels = list(study.grade_levels.all())
    summary = ", ".join(f"{level.value} {level.label}" for level in levels)
    return Step(
        "grades",
        "Grade scale",
        len(levels) >= 2,
        summary,
        [] if len(levels) >= 2 else ["The scale needs at least two grades."],
        locked="Set when the study was created." if levels else "",
    )


def _consent_step(study: Study) -> Step:
    missing = (
        [] if study.consent_text.strip() else ["Write the consent text participants accept before starting."]
    )
    return Step("consent", "Consent", not missing, f"Version {study.consent_version}.", missing)


def _questionnaires_step(study: Study) -> Step:
    before = usable_items(study.questionnaire) or DEFAULT_QUESTIONNAIRE
    each = usable_items(study.pre_task_questionnaire)  # no default: none unless the researcher adds one
    after = usable_items(study.post_task_questionnaire) or DEFAULT_POST_TASK_QUESTIONNAIRE
    summary = (
        f"Before the first task: {counted(len(before), 'item')}"
        f"{'' if study.questionnaire else ' (the default)'}; "
        f"before each task: {counted(len(each), 'item') if each else 'none'}; "
        f"after each task: {counted(len(after), 'item')}"
        f"{'' if study.post_task_questionnaire else ' (the default)'}."
    )
    return Step("questionnaires", "Questionnaires", True, summary, required=False)


def _time_step(study: Study) -> Step:
    summary = (
        f"{study.time_limit_minutes} minutes per scenario."
        if study.time_limit_minutes
        else "No time limit per scenario."
    )
    return Step("time", "Time limits", True, summary, required=False)


def study_ready(steps: list[Step]) -> bool:
    return all(step.done for step in steps if step.required)
