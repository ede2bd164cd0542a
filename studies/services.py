"""Writes that touch several models. Named `<entity>_<action>`, keyword-only arguments."""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from .latin_square import assignment_plan
from .models import (
    DEFAULT_GRADE_LABELS,
    Assignment,
    GradeLevel,
    Participant,
    Scenario,
    Study,
    System,
)


class DesignLockedError(ValueError):
    """Scenarios and systems cannot change once participants hold assignments built from them."""


def _unique_slug(name: str) -> str:
    base = slugify(name)[:60] or "study"
    slug, suffix = base, 2
    while Study.objects.filter(slug=slug).exists():
        slug, suffix = f"{base}-{suffix}", suffix + 1
    return slug


@transaction.atomic
def study_create(
    *,
    owner,
    name: str,
    description: str = "",
    grade_labels: Sequence[str] = DEFAULT_GRADE_LABELS,
    consent_text: str = "",
    consent_version: str = "1",
    collection=None,
    time_limit_minutes: int | None = None,
) -> Study:
    labels = [label.strip() for label in grade_labels]
    if len(labels) < 2 or any(not label for label in labels):
        raise ValueError("a grade scale needs at least two grades, each with a label")
    if len(labels) > 10:
        raise ValueError("a grade scale has at most ten grades (0..9)")
    study = Study.objects.create(
        owner=owner,
        name=name,
        slug=_unique_slug(name),
        description=description,
        consent_text=consent_text,
        consent_version=consent_version,
        collection=collection,
        time_limit_minutes=time_limit_minutes,
    )
    study.researchers.add(owner)
    GradeLevel.objects.bulk_create(
        GradeLevel(study=study, value=value, label=label) for value, label in enumerate(labels)
    )
    return study


def _refuse_if_locked(study: Study) -> None:
    # Ask the database: the caller's instance may predate the first enrolment.
    if Study.objects.filter(pk=study.pk, design_locked_at__isnull=False).exists():
        raise DesignLockedError(
            f"study {study.slug!r} already has participants; its scenarios and systems are fixed"
        )


def scenario_add(*, study: Study, code: str, title: str, text: str, topic_id: str) -> Scenario:
    _refuse_if_locked(study)
    return Scenario.objects.create(study=study, code=code, title=title, text=text, topic_id=topic_id)


def system_add(*, study: Study, code: str, name: str, backend: str = System.Backend.BUILTIN, config=None) -> System:
    _refuse_if_locked(study)
    return System.objects.create(study=study, code=code, name=name, backend=backend, config=config or {})


@transaction.atomic
def participants_enrol(*, study: Study, count: int) -> list[Participant]:
    """Enrol `count` participants, each given the next rows of the study's balanced plan, persisted once.

    The plan is deterministic in the enrolment index, so enrolling 10 and then 20 gives the same orders as
    enrolling 30 at once.
    """
    if count < 1:
        raise ValueError("enrol at least one participant")
    # Lock the study row so two concurrent enrolments cannot take the same plan rows.
    study = Study.objects.select_for_update().get(pk=study.pk)
    scenarios = list(study.scenarios.order_by("id"))
    systems = list(study.systems.order_by("id"))
    if not scenarios or not systems:
        raise ValueError("add the study's scenarios and systems before enrolling participants")
    if len(scenarios) % len(systems):
        raise ValueError(
            f"{len(scenarios)} scenarios cannot be shared equally between {len(systems)} systems; "
            "each participant must use every system for the same number of scenarios"
        )
    start = study.participants.count()
    plan = assignment_plan(scenarios, systems, start + count)[start:]
    existing_codes = set(study.participants.values_list("code", flat=True))
    participants = []
    for offset in range(count):
        index = start + offset
        code = f"P{index + 1:03d}"
        while code in existing_codes:
            code = f"P{index + 1:03d}-{secrets.token_hex(2)}"
        participants.append(Participant(study=study, code=code, enrolment_index=index))
    # bulk_create sets primary keys on both supported backends (PostgreSQL, SQLite >= 3.35).
    participants = Participant.objects.bulk_create(participants)
    Assignment.objects.bulk_create(
        Assignment(participant=participant, position=position, scenario=scenario, system=system)
        for participant, order in zip(participants, plan, strict=True)
        for position, (scenario, system) in enumerate(order, start=1)
    )
    if study.design_locked_at is None:
        study.design_locked_at = timezone.now()
        study.save(update_fields=["design_locked_at"])
    return participants


@transaction.atomic
def assignment_retake(*, assignment: Assignment, reason: str, system: System | None = None) -> Assignment:
    """An explicit, reasoned retake of a scenario a participant already worked, appended to their order."""
    if not reason.strip():
        raise ValueError("a retake needs a reason")
    participant = assignment.participant
    last = participant.assignments.order_by("-position").first()
    return Assignment.objects.create(
        participant=participant,
        position=last.position + 1,
        scenario=assignment.scenario,
        system=system or assignment.system,
        retake_of=assignment,
        retake_reason=reason.strip(),
    )
