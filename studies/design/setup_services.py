"""The writes of a study's set-up pages (docs/setting-up-a-study.md): systems and scenarios (through the
design-lock rule of studies.design.services), scenarios from the collection's topics, questionnaires built
from item types and shipped instruments, consent text with versions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from django.db import IntegrityError, transaction

from studies.design import services
from studies.errors import DesignError
from studies.models import AuditAction, AuditEntry, CollectionTopic, Scenario, Study, System
from studies.questionnaires.instruments import INSTRUMENTS
from studies.questionnaires.items import questionnaire_errors

QUESTIONNAIRES = {
    "questionnaire": "Before the first task",
    "pre_task_questionnaire": "Before each task",
    "post_task_questionnaire": "After each task",
}


def system_save(
    *, study: Study, system: System | None = None, code: str, name: str, backend: str, config: dict
) -> System:
    """Add a system, or change one, refused when its config cannot work (the services' one check,
    services.system_check_config) or once the design is locked."""
    try:
        with transaction.atomic():
            if system is None:
                return services.system_add(study=study, code=code, name=name, backend=backend, config=config)
            changed = services.design_row_update(
                study=study, row=system, code=code, name=name, backend=backend, config=config
            )
            return cast(System, changed)  # the row it was given
    except IntegrityError:
        raise DesignError(f"the study already has a system with code {code!r}") from None


def scenario_save(
    *,
    study: Study,
    scenario: Scenario | None = None,
    code: str,
    title: str,
    text: str,
    topic_id: str,
    practice: bool = False,
) -> Scenario:
    try:
        with transaction.atomic():
            if scenario is None:
                return services.scenario_add(
                    study=study, code=code, title=title, text=text, topic_id=topic_id, practice=practice
                )
            changed = services.design_row_update(
                study=study,
                row=scenario,
                code=code,
                title=title,
                text=text,
                topic_id=topic_id,
                practice=practice,
            )
            return cast(Scenario, changed)  # the row it was given
    except IntegrityError:
        raise DesignError(
            f"the study already has a scenario with code {code!r} or on topic {topic_id!r}"
        ) from None


def topic_scenario_text(topic: CollectionTopic) -> str:
    """What a participant reads for a topic: its description (else its title), then its narrative."""
    parts = [topic.description or topic.title]
    if topic.narrative:
        parts.append(topic.narrative)
    return "\n\n".join(parts)


@transaction.atomic
def scenarios_from_topics(*, study: Study, topic_ids: Sequence[str]) -> list[Scenario]:
    """One scenario per topic of the study's collection (code "T<topic>", its title and text pre-filled; the
    researcher edits them afterwards). A topic the study already has a scenario for is refused."""
    services.design_check_unlocked(study=study)
    if study.collection_id is None:
        raise DesignError("choose the study's collection first")
    topics = {
        t.topic_id: t
        for t in CollectionTopic.objects.filter(
            collection_id=study.collection_id, topic_id__in=list(topic_ids)
        )
    }
    missing = [t for t in topic_ids if t not in topics]
    if missing:
        raise DesignError(f"the collection has no topic {missing[0]!r}")
    taken = set(study.scenarios.values_list("topic_id", flat=True))
    created = []
    for topic_id in topic_ids:
        if topic_id in taken:
            raise DesignError(f"the study already has a scenario on topic {topic_id!r}")
        topic = topics[topic_id]
        created.append(
            scenario_save(
                study=study,
                code=f"T{topic_id}"[:40],
                title=topic.title[:200],
                text=topic_scenario_text(topic),
                topic_id=topic_id,
            )
        )
    return created


def _questionnaire_set(study: Study, which: str, items: list[dict]) -> Study:
    if which not in QUESTIONNAIRES:
        raise DesignError(f"no questionnaire {which!r}; one of {', '.join(QUESTIONNAIRES)}")
    errors = questionnaire_errors(items)
    if errors:
        raise DesignError("; ".join(errors[:3]))
    return services.study_update(study=study, **{which: items})


@transaction.atomic
def questionnaire_item_add(*, study: Study, which: str, item: dict) -> Study:
    study = Study.objects.select_for_update().get(pk=study.pk)
    return _questionnaire_set(study, which, [*getattr(study, which, []), item])


@transaction.atomic
def questionnaire_instrument_add(*, study: Study, which: str, instrument: str) -> Study:
    if instrument not in INSTRUMENTS:
        raise DesignError(f"no instrument {instrument!r}; one of {', '.join(INSTRUMENTS)}")
    study = Study.objects.select_for_update().get(pk=study.pk)
    current = list(getattr(study, which, []))
    names = {item.get("name") for item in current if isinstance(item, dict)}
    added = [dict(item) for item in INSTRUMENTS[instrument].items]
    if any(item["name"] in names for item in added):
        raise DesignError(f"{INSTRUMENTS[instrument].title} is already part of this questionnaire")
    return _questionnaire_set(study, which, current + added)


def _questionnaire_locked(study: Study, which: str) -> tuple[Study, list]:
    if which not in QUESTIONNAIRES:
        raise DesignError(f"no questionnaire {which!r}; one of {', '.join(QUESTIONNAIRES)}")
    study = Study.objects.select_for_update().get(pk=study.pk)
    return study, list(getattr(study, which, []))


def _position(items: list, name: str) -> int:
    for position, item in enumerate(items):
        if isinstance(item, dict) and item.get("name") == name:
            return position
    raise DesignError(f"the questionnaire has no item {name!r}")


@transaction.atomic
def questionnaire_item_edit(*, study: Study, which: str, name: str, item: dict) -> Study:
    """Replace the item `name` with `item` (which may rename it), in its place; its page break stays."""
    study, current = _questionnaire_locked(study, which)
    position = _position(current, name)
    item = dict(item)
    if current[position].get("new_page") and "new_page" not in item:
        item["new_page"] = True
    current[position] = item
    return _questionnaire_set(study, which, current)


@transaction.atomic
def questionnaire_item_move(*, study: Study, which: str, name: str, by: int) -> Study:
    """Move the item `name` up (by=-1) or down (by=1) one place; page breaks stay with their items."""
    study, current = _questionnaire_locked(study, which)
    position = _position(current, name)
    to = position + by
    if by not in (-1, 1) or not 0 <= to < len(current):
        raise DesignError(f"{name} is already {'first' if by < 0 else 'last'}")
    current[position], current[to] = current[to], current[position]
    return _questionnaire_set(study, which, current)


@transaction.atomic
def questionnaire_page_break(*, study: Study, which: str, name: str, on: bool) -> Study:
    """Start a new page at the item `name` (on) or join it to the page before (off)."""
    study, current = _questionnaire_locked(study, which)
    position = _position(current, name)
    if on and position == 0:
        raise DesignError(f"{name} is the first item: it is on the first page already")
    item = dict(current[position])
    if on:
        item["new_page"] = True
    else:
        item.pop("new_page", None)
    current[position] = item
    return _questionnaire_set(study, which, current)


@transaction.atomic
def questionnaire_item_remove(*, study: Study, which: str, name: str) -> Study:
    study = Study.objects.select_for_update().get(pk=study.pk)
    current = list(getattr(study, which, []))
    kept = [item for item in current if not (isinstance(item, dict) and item.get("name") == name)]
    if len(kept) == len(current):
        raise DesignError(f"the questionnaire has no item {name!r}")
    return _questionnaire_set(study, which, kept)


@transaction.atomic
def consent_update(*, study: Study, text: str, version: str, by=None) -> Study:
    """Change the consent text. Once a participant consented to the current version, a changed text needs a
    new version (each participant's consent names the version they read); the old text is kept in the audit
    log, so every version a participant consented to can be shown again."""
    study = Study.objects.select_for_update().get(pk=study.pk)
    version = version.strip()
    if not version:
        raise DesignError("the consent text needs a version")
    if text == study.consent_text and version == study.consent_version:
        return study
    consented = study.participants.filter(
        preview_at__isnull=True, consent_version=study.consent_version, consented_at__isnull=False
    )
    if text != study.consent_text and version == study.consent_version and consented.exists():
        raise DesignError(
            f"participants consented to version {study.consent_version!r}: give the changed text "
            "a new version"
        )
    if (
        version != study.consent_version
        and study.participants.filter(preview_at__isnull=True, consent_version=version).exists()
    ):
        raise DesignError(f"version {version!r} was used before, for another text; choose a new one")
    AuditEntry.objects.create(
        study=study,
        action=AuditAction.CONSENT_CHANGED,
        detail={
            "old_version": study.consent_version,
            "old_text": study.consent_text,
            "new_version": version,
            "by": getattr(by, "username", ""),
        },
    )
    return services.study_update(study=study, consent_text=text, consent_version=version)


def consent_versions(*, study: Study) -> list[dict]:
    """Every version of the consent text, newest first: {"version", "text", "current", "consented"}."""
    counts: dict[str, int] = {}
    for version in study.participants.filter(preview_at__isnull=True, consented_at__isnull=False).values_list(
        "consent_version", flat=True
    ):
        counts[version] = counts.get(version, 0) + 1
    versions: list[dict[str, Any]] = [
        {"version": study.consent_version, "text": study.consent_text, "current": True}
    ]
    seen = {study.consent_version}
    for entry in study.audit_entries.filter(action=AuditAction.CONSENT_CHANGED).order_by("-at", "-id"):
        old = entry.detail.get("old_version")
        if old and old not in seen:
            versions.append({"version": old, "text": entry.detail.get("old_text", ""), "current": False})
            seen.add(old)
    for row in versions:
        row["consented"] = counts.get(row["version"], 0)
    return versions
