"""What a pre-registration fixes, and what a later change of the study is measured against: the design,
the primary measure (the default run's summary and parameters), the exclusion and effort rules, the checks
and the reference version, read from the study as it is now. `deviations` compares the facts frozen with the
facts now, so a deviation is derived when read, never stored (a change made before the freeze is the plan)."""

from __future__ import annotations

from dataclasses import dataclass

from studies.models import Study
from studies.population import study_population

from ..models import ScoringRun

# The default run's parameters that decide a score (ScoringRun's fields), in the order the page lists them.
RUN_PARAMETERS = (
    "weights",
    "b",
    "bq",
    "top",
    "formulation",
    "gain",
    "duplicates",
    "short_lists",
    "scan",
    "judgments",
)


def study_facts(study: Study, *, primary_summary: str) -> dict:
    """The facts of the study now, JSON-ready (lists, not tuples, so a frozen copy compares equal)."""
    run = ScoringRun.objects.filter(study=study, is_default=True).first()
    recruitment = getattr(study, "recruitment", None)
    newest = study.reference_versions.order_by("-number").first()
    checks = (recruitment.checks or {}) if recruitment is not None else {}
    return {
        "design": {
            "kind": study.design or "within",
            "scenarios": [
                [s.code, s.title, bool(s.practice), s.topic_id] for s in study.scenarios.order_by("code")
            ],
            "systems": [[s.code, s.name, s.backend, s.config] for s in study.systems.order_by("code")],
            "time_limit_minutes": study.time_limit_minutes,
        },
        "primary_measure": {
            "summary": primary_summary,
            "parameters": None if run is None else {name: getattr(run, name) for name in RUN_PARAMETERS},
        },
        "exclusion": {
            "population": study_population(study).code(),
            "min_agreement": study.exclusion_min_agreement,
            "measure": study.exclusion_measure or "kappa_linear",
            "min_documents": study.exclusion_min_documents or 5,
        },
        "effort": None
        if recruitment is None
        else {
            "min_queries": recruitment.effort_min_queries,
            "min_judgments": recruitment.effort_min_judgments,
            "min_active_seconds": recruitment.effort_min_active_seconds,
            "outcome": recruitment.effort_outcome,
        },
        "checks": {
            "preset": checks.get("preset", "none"),
            "items": [item.get("name", "") for item in checks.get("items", []) if isinstance(item, dict)],
        },
        "reference_version": None if newest is None else newest.number,
    }


@dataclass(frozen=True)
class Deviation:
    """One way the study differs from its frozen plan: `part` (design, primary measure, N, ...), what was
    planned and what it is now, in words."""

    part: str
    planned: str
    now: str

    def text(self) -> str:
        return f"{self.part}: planned {self.planned}, now {self.now}"


PART_NAMES = {
    "design": "design",
    "primary_measure": "primary measure",
    "exclusion": "exclusion rules",
    "effort": "effort rules",
    "checks": "checks",
    "reference_version": "reference version",
}


def _words(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, dict):  # keys sorted: PostgreSQL's jsonb gives a frozen dict back in its own order
        return "; ".join(f"{key} {_words(value[key])}" for key in sorted(value))
    if isinstance(value, list):
        return "[" + ", ".join(_words(item) for item in value) + "]"
    return str(value)


def _changed_keys(planned: dict, now: dict) -> list[str]:
    return sorted(key for key in {*planned, *now} if planned.get(key) != now.get(key))


def deviations(
    frozen: dict, now: dict, *, planned_participants: int | None, enrolled: int, closed: bool
) -> list[Deviation]:
    """The deviations of `now` from `frozen` (both study_facts), part by part, naming the keys that changed;
    the sample size deviates when more were enrolled than planned, or the study closed with another number."""
    out = []
    for part, name in PART_NAMES.items():
        planned, current = frozen.get(part), now.get(part)
        if planned == current:
            continue
        if isinstance(planned, dict) and isinstance(current, dict):
            for key in _changed_keys(planned, current):
                label = f"{name}, {key.replace('_', ' ')}"
                out.append(Deviation(label, _words(planned.get(key)), _words(current.get(key))))
        else:
            out.append(Deviation(name, _words(planned), _words(current)))
    if planned_participants is not None and (
        enrolled > planned_participants or (closed and enrolled != planned_participants)
    ):
        now_words = f"{enrolled} enrolled" + (", the study closed" if closed else "")
        out.append(Deviation("sample size", f"{planned_participants} participants", now_words))
    return out
