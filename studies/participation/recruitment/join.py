"""The public link's arrivals: the same panel id gets the same participant back; a new one takes the next
row of the plan (studies/design/rows.py: rows_to_issue, as the researcher's enrolment does)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from studies.design.lifecycle import ARRIVAL_MESSAGES, OPEN, status_of
from studies.design.orders import design_problem, participant_order
from studies.design.rows import rows_to_issue
from studies.errors import RecruitmentError, Refused
from studies.models import (
    Assignment,
    AuditAction,
    AuditEntry,
    Participant,
    ParticipantState,
    Recruitment,
    Study,
)
from studies.participation.recruitment.panels import (
    PanelIds,
    panel_id_canonical,
    panel_id_lookup,
    recruitment_of,
)
from studies.participation.recruitment.sweep import arrival_sweep


@dataclass
class Joined:
    participant: Participant
    created: bool
    reissued_from: int | None = None  # the participant whose freed row this one received


def participant_join(*, study: Study, ids: PanelIds, now: datetime | None = None) -> Joined:
    """The public link's first visit: the participant with this panel id (server side: the same id gets the
    same participant back), or a new one given the next row: a freed row first (least held, then lowest),
    else the next fresh row of the plan. Refused unless the study is open, or when it is full (every row
    touches a closed cell)."""
    panel = Recruitment.objects.filter(study=study).values_list("panel", flat=True).first() or "generic"
    ids = replace(ids, panel_id=panel_id_canonical(panel, ids.panel_id))  # one stored form per panel
    existing = _by_panel_id(study, panel, ids)
    if existing is not None:
        return Joined(existing, False)
    # Always before the row is chosen, beat or not: the overdue are timed out (their own transactions, so a
    # refused arrival keeps them), and their rows go to this arrival rather than a fresh one.
    arrival_sweep(study=study, now=now)
    try:
        with transaction.atomic():
            return _join_locked(study=study, panel=panel, ids=ids, now=now or timezone.now())
    except IntegrityError:
        # The same panel id at the same moment (two tabs; SQLite does not lock the study row): the winner's.
        existing = _by_panel_id(study, panel, ids)
        if existing is None:
            raise
        return Joined(existing, False)


def participant_of_panel_id(*, study: Study, panel_id: str) -> Participant | None:
    """The study's participant with this panel id as the public link would find it (folded as its panel
    writes ids), or None."""
    panel = Recruitment.objects.filter(study=study).values_list("panel", flat=True).first() or "generic"
    return _by_panel_id(study, panel, PanelIds(panel_id_canonical(panel, panel_id)))


def _by_panel_id(study: Study, panel: str, ids: PanelIds) -> Participant | None:
    """The participant with this panel id, in any letter case for the panels whose ids have one."""
    return Participant.objects.filter(study=study, **panel_id_lookup(panel, ids.panel_id)).first()


def _join_locked(*, study: Study, panel: str, ids: PanelIds, now: datetime) -> Joined:
    # The study row is the lock researcher enrolment takes too: one arrival at a time picks a row.
    study = Study.objects.select_for_update().get(pk=study.pk)
    existing = _by_panel_id(study, panel, ids)
    if existing is not None:
        return Joined(existing, False)
    # The study's one status is the link's (design/lifecycle.py): a draft, paused or closed one makes nobody.
    if (status := status_of(study)) != OPEN:
        raise Refused(ARRIVAL_MESSAGES[status])
    recruitment = recruitment_of(study)
    scenarios = list(study.scenarios.order_by("id"))
    systems = list(study.systems.order_by("id"))
    if design_problem(scenarios, systems):
        raise Refused("This study is not ready for participants yet.")
    try:
        [(row, freed_from)] = rows_to_issue(
            study=study, count=1, now=now, recruitment=recruitment, scenarios=scenarios, systems=systems
        )
    except RecruitmentError:  # every row touches a closed cell
        raise Refused(
            "This study is not taking new participants at the moment. Thank you for your interest."
        ) from None
    index = (
        study.participants.filter(preview_at__isnull=True)  # a preview's index is out of the plan's range
        .order_by("-enrolment_index")
        .values_list("enrolment_index", flat=True)
        .first()
    )
    index = 0 if index is None else index + 1
    code = f"P{index + 1:03d}"
    if study.participants.filter(code=code).exists():
        code = f"P{index + 1:03d}-{ids.panel_id[-4:]}"
    participant = Participant.objects.create(
        study=study,
        code=code,
        enrolment_index=index,
        plan_row=row,
        reissue_of_id=freed_from,
        panel_id=ids.panel_id,
        panel_study_id=ids.study_id,
        panel_session_id=ids.session_id,
        started_at=now,
        state=ParticipantState.STARTED,
        state_changed_at=now,
    )
    Assignment.objects.bulk_create(
        Assignment(participant=participant, position=position, scenario=scenario, system=system)
        for position, (scenario, system) in enumerate(
            participant_order(study=study, scenarios=scenarios, systems=systems, row=row), start=1
        )
    )
    if study.design_locked_at is None:
        Study.objects.filter(pk=study.pk, design_locked_at__isnull=True).update(design_locked_at=now)
    AuditEntry.objects.create(
        study=study,
        participant_code=code,
        action=AuditAction.PARTICIPANT_JOINED,
        detail={
            "panel": recruitment.panel,
            "plan_row": row,
            "reissue_of": freed_from,
            # Where the completion page posts MTurk's form (mturk_submit_to_of): kept here, as the arrival's
            # record, since Participant has no column for it.
            **({"turk_submit_to": ids.submit_to} if ids.submit_to else {}),
        },
    )
    return Joined(participant, True, freed_from)
