"""Copy this study: a study's design in a new draft study (docs/setting-up-a-study.md, "Copy a study").

Copied: the settings (consent, questionnaires, time limits, what is recorded, the exclusion rule: every column
of Study but its identity, owner, life cycle and lock), the grade scale, the collection (with its judgments as
the copy's first reference version, as for a new study built on it), the scenarios, the systems, and the
recruitment settings (panel, completion URL, time limit, checks, effort rules, code mode, closed cells), and
the assessors' guidelines (the study's and each scenario's).
Not copied: participants and everything they did, reference versions made since (expert assessment), scoring
runs, assessors, completion codes (fresh ones, a fresh public link and secret), the other researchers.

It lives here, beside study_collection_attach, which it calls: the library is the layer that may use the
design's, the assessment's and recruitment's services together (pyproject.toml's import contracts).
"""

from __future__ import annotations

from django.db import transaction

from studies.design.services import study_create
from studies.errors import DesignError
from studies.library.services import study_collection_attach
from studies.models import (
    AssessmentGuidelines,
    AuditAction,
    AuditEntry,
    GradeLevel,
    Recruitment,
    Scenario,
    Study,
    System,
)
from studies.participation.recruitment.panels import recruitment_update

# The columns of Study a copy does not take: its identity, owner, life cycle and lock, and the collection
# (attached through its service).
NOT_COPIED = frozenset(
    {
        "id",
        "name",
        "slug",
        "owner",
        "collection",
        "design_locked_at",
        "created_at",
        "status",
        "status_changed_at",
    }
)
# Recruitment settings a copy takes (recruitment_update checks them as for the page); the completion codes are
# fresh, since a panel tells the studies' completers apart by them.
RECRUITMENT_COPIED = (
    "panel",
    "completion_url",
    "time_limit_minutes",
    "closed_cells",
    "checks",
    "effort_min_queries",
    "effort_min_judgments",
    "effort_min_active_seconds",
    "effort_outcome",
    "code_mode",
)


NAME_MAX = 200  # Study.name's max_length


@transaction.atomic
def study_copy(*, study: Study, by, name: str) -> Study:
    """A new draft study owned by `by`, named `name`, with `study`'s design and settings (above)."""
    name = (name or "").strip()
    if not name:
        raise DesignError("name: the copy needs a name")
    if len(name) > NAME_MAX:
        raise DesignError(f"name: at most {NAME_MAX} characters")
    levels = list(study.grade_levels.order_by("value"))
    copy = study_create(owner=by, name=name, grade_labels=[level.label for level in levels])
    if [level.value for level in levels] != [level.value for level in copy.grade_levels.all()]:
        copy.grade_levels.all().delete()  # a scale not numbered 0..n-1 (an imported one): as it is
        GradeLevel.objects.bulk_create(GradeLevel(study=copy, value=v.value, label=v.label) for v in levels)
    fields = [f.attname for f in Study._meta.concrete_fields if f.name not in NOT_COPIED]
    for attname in fields:
        setattr(copy, attname, getattr(study, attname))
    copy.save(update_fields=fields)
    if study.collection is not None:
        study_collection_attach(study=copy, collection=study.collection, by=by)
    for model, related in ((Scenario, study.scenarios), (System, study.systems)):
        model.objects.bulk_create(_row_copy(row, copy) for row in related.order_by("id"))
    _guidelines_copy(study, copy)
    original = Recruitment.objects.filter(study=study).first()
    if original is not None:
        recruitment_update(study=copy, **{name: getattr(original, name) for name in RECRUITMENT_COPIED})
    AuditEntry.objects.create(
        study=copy,
        action=AuditAction.STUDY_COPIED,
        detail={"from": study.slug, "by": getattr(by, "username", "")},
    )
    copy.refresh_from_db()  # the collection was attached through its own instance
    return copy


def _guidelines_copy(study: Study, copy: Study) -> None:
    """The guidelines assessors read, the study's and each scenario's (matched by scenario code)."""
    scenarios = {scenario.code: scenario for scenario in copy.scenarios.all()}
    AssessmentGuidelines.objects.bulk_create(
        AssessmentGuidelines(
            study=copy,
            scenario=scenarios[guidelines.scenario.code] if guidelines.scenario else None,
            text=guidelines.text,
            updated_by=guidelines.updated_by,
            updated_at=guidelines.updated_at,
        )
        for guidelines in study.assessment_guidelines.select_related("scenario").order_by("id")
    )


def _row_copy(row, study: Study):
    """A scenario or system of the copy: every column of the original's row but its id and study."""
    values = {
        f.attname: getattr(row, f.attname)
        for f in type(row)._meta.concrete_fields
        if not f.primary_key and f.name != "study"
    }
    return type(row)(study=study, **values)
