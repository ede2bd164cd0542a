"""Writes that touch several models. Named `<entity>_<action>`, keyword-only arguments."""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from studies.design.latin_square import DESIGNS
from studies.design.lifecycle import DRAFT, OPEN, preview_delete, study_check_accepting
from studies.design.orders import design_problem, participant_order
from studies.design.rows import rows_to_issue
from studies.design.selectors import collection_usable_by
from studies.errors import (
    CollectionAccessError,
    DesignError,
    DesignLockedError,
    RecruitmentError,
    StudyOwnerOnlyError,
    SystemConfigError,
)
from studies.models import (
    DEFAULT_GRADE_LABELS,
    Assignment,
    Collection,
    GradeLevel,
    Participant,
    Scenario,
    Study,
    System,
)
from studies.questionnaires.answered import questionnaire_answered
from studies.questionnaires.edits import answered_change_errors
from studies.questionnaires.items import questionnaire_shown
from studies.search.systems import system_config_problem


def collection_check_usable(*, user, collection: Collection) -> None:
    """The one rule for building a study on a collection: its owner, a researcher it is shared with, or a
    superuser (docs/collections-and-systems.md). Forms, the API, the admin and every importer call this."""
    if not collection_usable_by(user=user, collection=collection):
        raise CollectionAccessError(
            f"no collection {collection.pk} that {getattr(user, 'username', '?')} may use"
        )


def collection_may_share(user, collection: Collection) -> bool:
    """Its owner shares a collection, and superusers (who share the admin-only ones)."""
    return user.is_superuser or (collection.owner_id is not None and collection.owner_id == user.pk)


def collection_share(*, collection: Collection, user, by) -> bool:
    """Share `collection` with the researcher `user` (they may then build studies on it). Only its owner or
    a superuser shares; only researcher accounts receive. Returns False when it was already shared."""
    if not collection_may_share(by, collection):
        raise CollectionAccessError(
            f"only the owner of collection {collection.pk} (or a superuser) shares it"
        )
    if not (user.is_staff and user.is_active):
        raise CollectionAccessError(
            f"{user.username!r} is not a researcher account; collections are shared with researchers"
        )
    if user.pk == collection.owner_id:
        return False
    if collection.shared_with.filter(pk=user.pk).exists():
        return False
    collection.shared_with.add(user)
    return True


def collection_unshare(*, collection: Collection, user, by) -> bool:
    """Stop sharing: `user` can no longer build new studies on it. Their studies already built on it keep it
    (their participants are mid-study). Returns False when it was not shared with them."""
    if not collection_may_share(by, collection):
        raise CollectionAccessError(
            f"only the owner of collection {collection.pk} (or a superuser) shares it"
        )
    if not collection.shared_with.filter(pk=user.pk).exists():
        return False
    collection.shared_with.remove(user)
    return True


def study_slug_free(*texts: str) -> str:
    """A slug no study has: the first of `texts` that slugifies to something ("study" if none), cut to 60
    characters, then -2, -3... The one rule for new studies and imported archives."""
    base = next((slug for slug in map(slugify, texts) if slug), "study")[:60]
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
    status: str = DRAFT,
) -> Study:
    """A new study, a draft (it takes participants once its set-up checklist passes and it is opened:
    design/lifecycle.py); an importer of past sessions (the Session Track log) makes it open.

    With `collection`, the study is built on it but gets none of its judgments here (the design layer writes
    no reference version): callers go through studies.library.services.study_create_on_collection, or call
    studies.assessment.collection_reference.reference_version_from_collection themselves."""
    if status not in (DRAFT, OPEN):
        raise DesignError(f"a new study is a draft or open, not {str(status)[:20]!r}")
    labels = [label.strip() for label in grade_labels]
    if len(labels) < 2 or any(not label for label in labels):
        raise DesignError("a grade scale needs at least two grades, each with a label")
    if len(labels) > 10:
        raise DesignError("a grade scale has at most ten grades (0..9)")
    if collection is not None:
        collection_check_usable(user=owner, collection=collection)
    study = Study.objects.create(
        owner=owner,
        name=name,
        slug=study_slug_free(name),
        description=description,
        consent_text=consent_text,
        consent_version=consent_version,
        collection=collection,
        time_limit_minutes=time_limit_minutes,
        status=status,
    )
    study.researchers.add(owner)
    GradeLevel.objects.bulk_create(
        GradeLevel(study=study, value=value, label=label) for value, label in enumerate(labels)
    )
    return study


# What a study's settings page and API may change; the design (scale, collection, scenarios, systems) has its
# own services and rules.
STUDY_SETTINGS = (
    "name",
    "description",
    "consent_text",
    "consent_version",
    "questionnaire",
    "post_task_questionnaire",
    "pre_task_questionnaire",
    # The exclusion rule on agreement with the reference (studies/assessment/exclusion.py).
    "exclusion_min_agreement",
    "exclusion_measure",
    "exclusion_min_documents",
    "time_limit_minutes",
    # The analysis population every reader counts by default (studies/population.py).
    "analysis_population",
)


def study_update(*, study: Study, **fields) -> Study:
    """Change a study's settings (the API's PUT and PATCH). The values are already validated (a serializer's
    or a form's); a field outside STUDY_SETTINGS is a DesignError, so no caller can reach the design here."""
    outside = sorted(set(fields) - set(STUDY_SETTINGS))
    if outside:
        raise DesignError(f"not a study setting: {', '.join(outside)}")
    for which in QUESTIONNAIRE_FIELDS & set(fields):
        if fields[which] != getattr(study, which):
            questionnaire_check_answered(study=study, which=which, items=fields[which])
    for name, value in fields.items():
        setattr(study, name, value)
    if fields:
        study.save(update_fields=list(fields))
    return study


QUESTIONNAIRE_FIELDS = {"questionnaire", "pre_task_questionnaire", "post_task_questionnaire"}


def questionnaire_check_answered(*, study: Study, which: str, items: list) -> None:
    """THE rule on changing a questionnaire that participants answered
    (studies/questionnaires/edits.py): its answered items keep their names, kinds, choices and
    ranges. Asked by every write of a questionnaire (the set-up page's editor, the API); raises DesignError
    naming each item. The questionnaire changed is the one participants were shown: the stored one, or the
    default while the study stores none (its answers are protected the same)."""
    stored = Study.objects.filter(pk=study.pk).only(which).first()
    errors = answered_change_errors(
        questionnaire_shown(stored, which) if stored is not None else [],
        items if isinstance(items, list) else [],
        questionnaire_answered(study=study, which=which),
    )
    if errors:
        raise DesignError("; ".join(errors))


def study_delete(*, study: Study, by) -> None:
    """Delete a study with everything it holds; only its owner may."""
    if study.owner_id != getattr(by, "pk", None):
        raise StudyOwnerOnlyError("only the study's owner may delete it")
    study.delete()


def design_check_unlocked(*, study: Study) -> None:
    """THE design-lock rule: once participants are enrolled (design_locked_at), no scenario or system may be
    added, changed or removed, since their assignments were built from them (the Latin square's balance).
    Pages, API, admin and importers all ask here; raises DesignLockedError.

    The study row is locked (SELECT ... FOR UPDATE) until the caller's transaction ends, as participants_enrol
    locks it: call this inside the transaction that writes the design, so a change and an enrolment running at
    once are serialised and the one that comes second sees the other (the change is refused, or the plan is
    built from the changed design). Outside a transaction it is a plain check."""
    # Ask the database: the caller's instance may predate the first enrolment. No savepoint (one read, nothing
    # to undo), and the refusal is raised after the block: an exception leaving a savepoint-less block would
    # doom the caller's transaction (the admin shows the refusal on its form, then goes on querying).
    with transaction.atomic(savepoint=False):
        locked_at = (
            Study.objects.select_for_update()
            .filter(pk=study.pk)
            .values_list("design_locked_at", flat=True)
            .first()
        )
    if locked_at is not None:
        raise DesignLockedError(
            f"study {study.slug!r} already has participants; its scenarios and systems are fixed"
        )


@transaction.atomic
def study_design_set(*, study: Study, design: str) -> Study:
    """Choose the study's design (within- or between-subjects; docs/latin-square.md), refused once the design
    is locked: every participant's order was built from it."""
    if design not in DESIGNS:
        raise DesignError(f"design: {design!r} is not one of {', '.join(DESIGNS)}")
    design_check_unlocked(study=study)
    study.design = design
    study.save(update_fields=["design"])
    return study


@transaction.atomic
def scenario_add(
    *, study: Study, code: str, title: str, text: str, topic_id: str, practice: bool = False
) -> Scenario:
    design_check_unlocked(study=study)
    return Scenario.objects.create(
        study=study, code=code, title=title, text=text, topic_id=topic_id, practice=practice
    )


@transaction.atomic
def system_check_config(*, code: str, backend: str, config) -> None:
    """THE rule for a system's kind and configuration, asked by every write of a System (the pages, the API,
    the admin's form, the archive import, the demo loader): refused here with the field and the problem, so a
    system that cannot search is never stored to fail later when a participant searches."""
    if backend not in System.Backend.values:
        raise SystemConfigError(
            f"system {code}: backend: {backend!r} is not one of {', '.join(System.Backend.values)}",
            field="backend",
        )
    problem = system_config_problem(backend, config)
    if problem:
        raise SystemConfigError(f"system {code}: config: {problem}", field="config")


def system_add(
    *, study: Study, code: str, name: str, backend: str = System.Backend.BUILTIN, config=None
) -> System:
    design_check_unlocked(study=study)
    config = {} if config is None else config
    system_check_config(code=code, backend=backend, config=config)
    return System.objects.create(study=study, code=code, name=name, backend=backend, config=config)


def _design_row_check(*, study: Study, row: Scenario | System) -> None:
    design_check_unlocked(study=study)
    if row.study_id != study.pk:
        raise DesignError(f"{row} is not part of study {study.slug!r}")


@transaction.atomic
def design_row_update(*, study: Study, row: Scenario | System, **fields) -> Scenario | System:
    """Change fields of one of the study's scenarios or systems (the API's PUT and PATCH), refused once the
    design is locked. The fields are already validated (a serializer's or a form's)."""
    _design_row_check(study=study, row=row)
    if isinstance(row, System) and ("backend" in fields or "config" in fields):
        system_check_config(
            code=fields.get("code", row.code),
            backend=fields.get("backend", row.backend),
            config=fields.get("config", row.config),
        )
    for name, value in fields.items():
        setattr(row, name, value)
    if fields:
        row.save(update_fields=list(fields))
    return row


@transaction.atomic
def design_row_delete(*, study: Study, row: Scenario | System) -> None:
    """Remove one of the study's scenarios or systems (the API's DELETE), refused once the design is
    locked."""
    _design_row_check(study=study, row=row)
    # A preview built on the old design goes with it (its assignments would hold the row back).
    preview_delete(study=study)
    row.delete()


@transaction.atomic
def participants_enrol(*, study: Study, count: int) -> list[Participant]:
    """Enrol `count` participants, each given the next row of the study's balanced plan, persisted once.

    The rows are chosen as for public-link arrivals (studies/design/rows.py: rows_to_issue): rows freed by
    attrition first, least held, each once (the new participant records whose row it was, reissue_of), then
    the next fresh rows; rows touching a closed cell never. The plan is deterministic in the row, so, without
    attrition, enrolling 10 and then 20 gives the same orders as enrolling 30 at once.
    """
    if count < 1:
        raise DesignError("enrol at least one participant")
    # Lock the study row so two concurrent enrolments (or an enrolment and an arrival) cannot take the same
    # rows.
    study = Study.objects.select_for_update().get(pk=study.pk)
    scenarios = list(study.scenarios.order_by("id"))
    systems = list(study.systems.order_by("id"))
    problem = design_problem(scenarios, systems)
    if problem:
        raise DesignError(f"{problem} before enrolling participants")
    study_check_accepting(study)  # paused or closed: no new participants (studies/design/lifecycle.py)
    start = study.participants.filter(preview_at__isnull=True).count()  # a preview takes no plan row
    # A row re-issued after attrition does not advance the next fresh row, so enrolment index and plan row
    # part once one is (docs/recruitment.md).
    try:
        chosen = rows_to_issue(study=study, count=count, scenarios=scenarios, systems=systems)
    except RecruitmentError as error:  # every row touches a closed cell
        raise DesignError(str(error)) from None
    plan = [
        participant_order(study=study, scenarios=scenarios, systems=systems, row=row) for row, _ in chosen
    ]
    existing_codes = set(study.participants.values_list("code", flat=True))
    participants = []
    for offset in range(count):
        index = start + offset
        code = f"P{index + 1:03d}"
        while code in existing_codes:
            code = f"P{index + 1:03d}-{secrets.token_hex(2)}"
        row, freed_from = chosen[offset]
        participants.append(
            Participant(study=study, code=code, enrolment_index=index, plan_row=row, reissue_of_id=freed_from)
        )
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
        raise DesignError("a retake needs a reason")
    participant = assignment.participant
    last = participant.assignments.order_by("-position").first()
    assert last is not None  # `assignment` is one of them
    return Assignment.objects.create(
        participant=participant,
        position=last.position + 1,
        scenario=assignment.scenario,
        system=system or assignment.system,
        retake_of=assignment,
        retake_reason=reason.strip(),
    )
