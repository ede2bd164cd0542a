"""Assessors: invitations (and their answers), the assessment plan, the allocation of pool documents to
assessors, and the assessors' judgments. docs/assessing.md explains the rules."""

from __future__ import annotations

import hashlib
import secrets
from collections import Counter, defaultdict

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from studies.assessment.selectors import pool_documents_assessed
from studies.errors import AssessmentError
from studies.models import (
    ASSESSORS_WHO_ARE_PEOPLE,
    AssessmentPlan,
    AssessorAssignment,
    AssessorInvitation,
    AssessorJudgment,
    AssessorScenario,
    PoolDocument,
    Study,
    StudyAssessor,
)


def _plan(study: Study) -> AssessmentPlan:
    plan, _ = AssessmentPlan.objects.get_or_create(study=study)
    return plan


@transaction.atomic
def assessor_invite(
    *, study: Study, username: str, invited_by, email: str = ""
) -> tuple[StudyAssessor | AssessorInvitation, str | None]:
    """Attach an assessor account to the study, creating it if needed. Returns (membership, password): the
    password is a fresh one-time password for a new account (tell the assessor), None for an existing one.
    An existing account of another lab gets a pending AssessorInvitation instead of a membership (see
    `assessor_add`). Researcher (staff) accounts are refused: an assessor must not reach researcher pages."""
    username = username.strip()
    if not username:
        raise AssessmentError("give the assessor a user name")
    user_model = get_user_model()
    user = user_model.objects.filter(username=username).first()
    password = None
    if user is None:
        password = secrets.token_urlsafe(12)
        user = user_model.objects.create_user(
            username, email=email.strip(), password=password, is_staff=False
        )
    return assessor_add(
        study=study, user=user, invited_by=invited_by, new_account=password is not None
    ), password


def assessor_needs_acceptance(*, study: Study, user) -> bool:
    """An assessor of another lab must accept before assessing. "The lab" of a study is simple: its
    researchers, and the assessors of any study with the same owner. Anyone else (an account that assesses
    only other owners' studies, or nothing yet) is of another lab (docs/assessing.md)."""
    if study.researchers.filter(pk=user.pk).exists():
        return False
    return not StudyAssessor.objects.filter(user=user, study__owner_id=study.owner_id).exists()


@transaction.atomic
def assessor_add(
    *, study: Study, user, invited_by, new_account: bool = False
) -> StudyAssessor | AssessorInvitation:
    """The one way an account becomes a study's assessor (the assessment page, the demo and every other
    caller come through here). Returns the membership, or for an assessor of another lab a pending
    invitation that only they can accept (`assessor_invitation_answer`); no membership, so no pool, before.
    `new_account`: the inviter has just created the account (and holds its password), so it is theirs."""
    if user.is_staff or user.is_superuser:
        raise AssessmentError(
            f"{user.username!r} is a researcher account; assessors need an account of their own"
        )
    membership = StudyAssessor.objects.filter(study=study, user=user).first()
    if membership is not None:
        return membership
    if new_account or not assessor_needs_acceptance(study=study, user=user):
        return _membership_create(study, user, invited_by)
    now = timezone.now()
    invitation, created = AssessorInvitation.objects.get_or_create(
        study=study, user=user, defaults={"invited_by": invited_by, "invited_at": now}
    )
    if not created and invitation.status != AssessorInvitation.Status.PENDING:
        # Declined earlier (or accepted, and the membership removed since): ask again.
        invitation.status, invitation.answered_at = AssessorInvitation.Status.PENDING, None
        invitation.invited_by, invitation.invited_at = invited_by, now
        invitation.save(update_fields=["status", "answered_at", "invited_by", "invited_at"])
    return invitation


def _membership_create(study: Study, user, invited_by) -> StudyAssessor:
    membership, created = StudyAssessor.objects.get_or_create(
        study=study, user=user, defaults={"invited_by": invited_by}
    )
    if created:
        allocate(study, rebalance=True)
    return membership


@transaction.atomic
def assessor_invitation_answer(*, invitation: AssessorInvitation, user, accept: bool) -> StudyAssessor | None:
    """The invited assessor accepts (they become an assessor of the study and get their share of the pools)
    or declines. Only they may answer, once: a second answer, or anyone else's, is refused."""
    if invitation.user_id != user.pk:
        raise AssessmentError("this invitation is not yours")
    status = AssessorInvitation.Status.ACCEPTED if accept else AssessorInvitation.Status.DECLINED
    # A conditional update: two answers at once (two tabs) cannot both win.
    answered = AssessorInvitation.objects.filter(
        pk=invitation.pk, user=user, status=AssessorInvitation.Status.PENDING
    ).update(status=status, answered_at=timezone.now())
    if not answered:
        raise AssessmentError("this invitation was already answered")
    invitation.refresh_from_db()
    if not accept:
        return None
    return _membership_create(invitation.study, user, invitation.invited_by)


@transaction.atomic
def assessment_plan_set(
    *,
    study: Study,
    assessors_per_document: int,
    double_judged_percent: int | None = None,
    highlight_participant_queries: bool | None = None,
) -> AssessmentPlan:
    """How many assessors judge each pool document (capped by how many the study has) and, with one, the
    percent of each scenario's documents that get a second assessor for agreement; None leaves a setting
    as it is. Unjudged work is dealt again; a document judged by more assessors than the new number keeps
    their judgments."""
    if assessors_per_document < 1:
        raise AssessmentError("at least one assessor judges each document")
    if double_judged_percent is not None and not 0 <= double_judged_percent <= 100:
        raise AssessmentError(
            f"the double-judged share is a percent from 0 to 100, not {double_judged_percent}"
        )
    plan = _plan(study)
    plan.assessors_per_document = assessors_per_document
    if double_judged_percent is not None:
        plan.double_judged_percent = double_judged_percent
    if highlight_participant_queries is not None:
        plan.highlight_participant_queries = highlight_participant_queries
    plan.save(
        update_fields=["assessors_per_document", "double_judged_percent", "highlight_participant_queries"]
    )
    allocate(study, rebalance=True)
    return plan


def _double_judged_key(pool_document_id: int) -> str:
    return hashlib.sha256(f"double-judged:{pool_document_id}".encode()).hexdigest()


def double_judged_choice(pool_document_ids: list[int], *, already: set[int], percent: int) -> set[int]:
    """Which of a scenario's pool documents get a second assessor: round(percent x n / 100) of them (halves
    up), those already judged or dealt twice first (never withdrawn), then the rest in the order of a hash of
    their id. The hash order does not depend on the other documents, so a grown pool keeps every earlier
    choice and adds the new ones it needs."""
    target = (2 * percent * len(pool_document_ids) + 100) // 200
    chosen = {pd for pd in pool_document_ids if pd in already}
    for pool_document_id in sorted(set(pool_document_ids) - chosen, key=_double_judged_key):
        if len(chosen) >= target:
            break
        chosen.add(pool_document_id)
    return chosen


def scenario_teams(study: Study, members: list[StudyAssessor]) -> dict[int, list[StudyAssessor]]:
    """scenario id -> the members who judge it: those who chose it, and those who chose no scenario (they
    judge all). In the members' order."""
    chosen: dict[int, set[int]] = defaultdict(set)
    for assessor_id, scenario_id in AssessorScenario.objects.filter(assessor__study=study).values_list(
        "assessor_id", "scenario_id"
    ):
        chosen[assessor_id].add(scenario_id)
    return {
        scenario_id: [m for m in members if m.id not in chosen or scenario_id in chosen[m.id]]
        for scenario_id in study.scenarios.values_list("id", flat=True)
    }


def allocate(study: Study, *, rebalance: bool = False) -> None:
    """Give each pool document min(k, its scenario's assessors) assessors, least-loaded first; with k = 1,
    the plan's double-judged share of each scenario's documents gets two (double_judged_choice).

    A scenario's documents go only to its assessors (scenario_teams: an assessor who chose scenarios judges
    those, one who chose none judges all). A growing pool only adds allocations, so nobody's list changes
    under them while they work. When the team, their scenarios or k changes (`rebalance`), unjudged
    allocations are dealt again so the work is shared evenly; allocations already judged are never
    withdrawn. Machine assessors are dealt nothing: they judge by runs.
    """
    members = list(study.assessors.filter(ASSESSORS_WHO_ARE_PEOPLE).order_by("id"))
    if not members:
        return
    plan = _plan(study)
    share = (plan.double_judged_percent or 0) if plan.assessors_per_document == 1 else 0
    user_of = {member.id: member.user_id for member in members}
    judged = set(
        AssessorJudgment.objects.filter(pool_document__pool__scenario__study=study).values_list(
            "pool_document_id", "assessor_id"
        )
    )
    existing = AssessorAssignment.objects.filter(assessor__study=study).order_by("id")
    if rebalance:
        unjudged = [a.id for a in existing if (a.pool_document_id, user_of.get(a.assessor_id)) not in judged]
        AssessorAssignment.objects.filter(id__in=unjudged).delete()
    current: dict[int, list[AssessorAssignment]] = defaultdict(list)
    load: Counter = Counter()
    for assignment in existing.all():
        current[assignment.pool_document_id].append(assignment)
        load[assignment.assessor_id] += 1
    documents_of: dict[int, list[int]] = defaultdict(list)
    for pool_document_id, scenario_id in (
        pool_documents_assessed(study_id=study.pk)  # a practice task's documents are dealt to nobody
        .order_by("id")
        .values_list("id", "pool__scenario_id")
    ):
        documents_of[scenario_id].append(pool_document_id)
    teams = scenario_teams(study, members)
    fresh = []
    for scenario_id, pool_document_ids in documents_of.items():
        team = teams.get(scenario_id, [])
        doubles: set[int] = set()
        if share and len(team) >= 2:
            twice = {pd for pd in pool_document_ids if len(current[pd]) >= 2}
            doubles = double_judged_choice(pool_document_ids, already=twice, percent=share)
        for pool_document_id in pool_document_ids:
            want = min(2 if pool_document_id in doubles else plan.assessors_per_document, len(team))
            taken = {a.assessor_id for a in current[pool_document_id]}
            candidates = sorted((m for m in team if m.id not in taken), key=lambda m: (load[m.id], m.id))
            for member in candidates[: max(want - len(taken), 0)]:
                fresh.append(AssessorAssignment(assessor=member, pool_document_id=pool_document_id))
                load[member.id] += 1
    AssessorAssignment.objects.bulk_create(fresh)


@transaction.atomic
def assessor_judgment_record(*, assessor, pool_document: PoolDocument, grade: int) -> AssessorJudgment:
    """Record (or change) an assessor's grade of a pool document allocated to them."""
    study = pool_document.pool.scenario.study
    if not AssessorAssignment.objects.filter(
        assessor__study=study, assessor__user=assessor, pool_document=pool_document
    ).exists():
        raise AssessmentError("this document is not allocated to this assessor")
    if grade not in study.grade_values():
        raise AssessmentError(f"grade {grade} is not in the study's scale")
    now = timezone.now()
    judgment, created = AssessorJudgment.objects.get_or_create(
        assessor=assessor,
        pool_document=pool_document,
        defaults={"grade": grade, "created_at": now, "updated_at": now},
    )
    if not created and judgment.grade != grade:
        judgment.grade, judgment.updated_at = grade, now
        judgment.save(update_fields=["grade", "updated_at"])
    return judgment
