"""Expert assessment: pools, assessors, their judgments, agreement, adjudication and reference versions.

Services (writes) are named `<entity>_<action>` and take keyword-only arguments; the reads the pages need
are at the end ("Reads"). The agreement math is in scoring/lib/agreement.py. docs/assessing.md explains the
rules, including our reading of the 2002 paper's rule for disagreements.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import secrets
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from scoring.lib import agreement
from scoring.lib.errors import InputError
from scoring.lib.trec_io import parse_qrels_lines
from studies.errors import AssessmentError
from studies.models import (
    AdjudicationDecision,
    AssessmentPlan,
    AssessmentPool,
    AssessorAssignment,
    AssessorInvitation,
    AssessorJudgment,
    Document,
    Judgment,
    PoolDocument,
    ReferenceJudgment,
    ReferenceVersion,
    Scenario,
    ShownResult,
    Study,
    StudyAssessor,
    reference_grade_allowed,
)
from studies.signals import reference_version_committed

PRESETS = {
    "2002": "2002 paper: one-point differences taken from each judge in turn, larger ones to the researcher",
    "researcher": "The researcher decides every disagreement",
    "majority": "Majority of assessors, then the researcher",
}
DEFAULT_TOP_X = 10


# --- Pools ----------------------------------------------------------------------------------------------


@dataclass
class PoolChange:
    added: int = 0
    removed: int = 0
    kept_judged: int = 0  # no longer selected by the rule but kept because an assessor judged them


def _rule_documents(scenario: Scenario, rule: str, top_x: int) -> dict[int, str]:
    """{document id: why} for the documents the rule selects from the scenario's sessions so far."""
    sessions = {
        "session__assignment__scenario": scenario,
        "session__assignment__participant__withdrawn_at__isnull": True,
    }
    why: dict[int, list[str]] = defaultdict(list)
    if rule in (AssessmentPool.Rule.RELEVANT, AssessmentPool.Rule.UNION):
        relevant = Judgment.objects.filter(grade__gte=1, **sessions).values_list("document_id", flat=True)
        for document_id in sorted(set(relevant)):
            why[document_id].append("judged relevant")
    if rule in (AssessmentPool.Rule.TOP_X, AssessmentPool.Rule.UNION):
        shown = ShownResult.objects.filter(
            rank__lte=top_x, **{f"query__{key}": value for key, value in sessions.items()}
        ).values_list("document_id", flat=True)
        for document_id in sorted(set(shown)):
            why[document_id].append(f"top {top_x}")
    return {document_id: " + ".join(reasons) for document_id, reasons in why.items()}


@transaction.atomic
def pool_build(
    *,
    study: Study,
    rule: str | None = None,
    top_x: int | None = None,
    scenarios: Iterable[Scenario] | None = None,
) -> dict[str, PoolChange]:
    """Build or grow each scenario's pool by `rule` (None: the pool's stored rule, "relevant" for a new pool).

    Run again when new sessions arrive: documents the rule now selects are added; documents an earlier rule
    added that it no longer selects are removed unless an assessor already judged them. Hand-added and
    qrels-imported documents always stay. Returns {scenario code: PoolChange}."""
    if rule is not None and rule not in AssessmentPool.Rule.values:
        raise AssessmentError(
            f"unknown pool rule {rule!r}; use one of {', '.join(AssessmentPool.Rule.values)}"
        )
    if top_x is not None and top_x < 1:
        raise AssessmentError("X of the top-X rule must be at least 1")
    changes: dict[str, PoolChange] = {}
    for scenario in scenarios if scenarios is not None else study.scenarios.order_by("id"):
        pool, _ = AssessmentPool.objects.get_or_create(scenario=scenario)
        pool.rule = rule or pool.rule
        pool.top_x = top_x or pool.top_x
        pool.built_at = timezone.now()
        pool.save(update_fields=["rule", "top_x", "built_at"])
        wanted = _rule_documents(scenario, pool.rule, pool.top_x)
        existing = {pd.document_id: pd for pd in pool.documents.all()}
        change = changes[scenario.code] = PoolChange()
        fresh = [
            PoolDocument(
                pool=pool, document_id=document_id, source=PoolDocument.Source.RULE, source_detail=why
            )
            for document_id, why in wanted.items()
            if document_id not in existing
        ]
        PoolDocument.objects.bulk_create(fresh)
        change.added = len(fresh)
        stale = [
            pd.id
            for doc, pd in existing.items()
            if pd.source == PoolDocument.Source.RULE and doc not in wanted
        ]
        judged = set(
            AssessorJudgment.objects.filter(pool_document_id__in=stale).values_list(
                "pool_document_id", flat=True
            )
        )
        change.kept_judged = len(judged)
        change.removed, _ = PoolDocument.objects.filter(id__in=set(stale) - judged).delete()
        change.removed = len(set(stale) - judged)
    _allocate(study)
    return changes


def _documents_by_external_id(study: Study, external_ids: Iterable[str]) -> dict[str, Document]:
    ids = set(external_ids)
    documents = Document.objects.filter(external_id__in=ids)
    if study.collection_id is not None:
        documents = documents.filter(collection_id=study.collection_id)
    else:
        # No collection yet: only those its owner may use, so naming another lab's documents reads exactly like
        # naming documents that do not exist (issue 14).
        from studies.design.selectors import collections_visible_to

        documents = documents.filter(collection__in=collections_visible_to(study.owner))
    found: dict[str, Document] = {}
    for document in documents:
        if document.external_id in found:
            raise AssessmentError(
                f"document {document.external_id!r} exists in several collections; give the study its collection"
            )
        found[document.external_id] = document
    return found


def _pool_for(scenario: Scenario) -> AssessmentPool:
    pool, _ = AssessmentPool.objects.get_or_create(scenario=scenario)
    return pool


@transaction.atomic
def pool_add_documents(*, scenario: Scenario, external_ids: Iterable[str], added_by) -> int:
    """Add documents to a scenario's pool by hand (all or none: an unknown id adds nothing). Returns how many
    were new to the pool."""
    wanted = [external_id.strip() for external_id in external_ids if external_id.strip()]
    if not wanted:
        raise AssessmentError("give at least one document id")
    found = _documents_by_external_id(scenario.study, wanted)
    unknown = [external_id for external_id in wanted if external_id not in found]
    if unknown:
        raise AssessmentError(
            f"unknown document ids: {', '.join(unknown[:10])}" + (" …" if len(unknown) > 10 else "")
        )
    pool = _pool_for(scenario)
    present = set(pool.documents.values_list("document_id", flat=True))
    detail = f"added by {getattr(added_by, 'username', 'unknown')}"
    fresh = {
        found[external_id].id: PoolDocument(
            pool=pool, document=found[external_id], source=PoolDocument.Source.MANUAL, source_detail=detail
        )
        for external_id in wanted
        if found[external_id].id not in present
    }
    PoolDocument.objects.bulk_create(fresh.values())
    _allocate(scenario.study)
    return len(fresh)


@dataclass
class QrelsEntry:
    line: int
    topic: str
    docid: str
    grade: int


def _qrels_entries(
    study: Study, lines: Iterable[str], path: str, *, other_topics: bool = False
) -> tuple[list[QrelsEntry], dict[str, Document]]:
    """Check a qrels file against the study: format (scoring.lib.trec_io's rules), topics that are the study's
    scenarios, documents of its collection. Raises InputError naming file and line; returns the entries in
    file order (each topic+document once) and the documents by external id.

    `other_topics`: keep lines whose topic is no scenario's (a collection's qrels judge all its topics), but
    refuse a file none of whose topics is a scenario's when the study has scenarios (the wrong file)."""
    lines = list(lines)
    parse_qrels_lines(lines, path)
    entries: dict[tuple[str, str], QrelsEntry] = {}
    for number, raw in enumerate(lines, start=1):
        fields = raw.split()
        if fields:
            entries.setdefault(
                (fields[0], fields[2]), QrelsEntry(number, fields[0], fields[2], int(fields[3]))
            )
    if not entries:
        raise InputError(path, None, "no qrels lines")
    topics = set(study.scenarios.values_list("topic_id", flat=True))
    found = _documents_by_external_id(study, [entry.docid for entry in entries.values()])
    if other_topics and topics and not any(entry.topic in topics for entry in entries.values()):
        raise InputError(
            path, None, f"none of its topics is a scenario topic of this study ({', '.join(sorted(topics))})"
        )
    for entry in entries.values():
        if entry.topic not in topics and not other_topics:
            raise InputError(
                path,
                entry.line,
                f"topic {entry.topic!r} is not a scenario topic of this study ({', '.join(sorted(topics))})",
            )
        if entry.docid not in found:
            raise InputError(path, entry.line, f"document {entry.docid!r} is not in the study's collection")
    return list(entries.values()), found


@transaction.atomic
def pool_import_qrels(*, study: Study, lines: Iterable[str], path: str, added_by) -> int:
    """Add every document of a qrels file to the pool of its topic's scenario, all or nothing (InputError
    with file:line). The grades are not used: the pool only says what experts judge. Returns how many
    documents were new to their pools."""
    entries, found = _qrels_entries(study, lines, path)
    pools = {scenario.topic_id: _pool_for(scenario) for scenario in study.scenarios.all()}
    present = set(
        PoolDocument.objects.filter(pool__scenario__study=study).values_list("pool_id", "document_id")
    )
    fresh = []
    for entry in entries:
        pool, document = pools[entry.topic], found[entry.docid]
        if (pool.id, document.id) not in present:
            present.add((pool.id, document.id))
            fresh.append(
                PoolDocument(
                    pool=pool,
                    document=document,
                    source=PoolDocument.Source.QRELS,
                    source_detail=f"{path}:{entry.line}",
                )
            )
    PoolDocument.objects.bulk_create(fresh)
    _allocate(study)
    return len(fresh)


# --- Assessors ------------------------------------------------------------------------------------------


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
    return assessor_add(study=study, user=user, invited_by=invited_by, new_account=password is not None), password


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
        _allocate(study, rebalance=True)
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
def assessment_plan_set(*, study: Study, assessors_per_document: int) -> AssessmentPlan:
    """How many assessors judge each pool document (capped by how many the study has). Unjudged work is
    dealt again; a document judged by more assessors than the new number keeps their judgments."""
    if assessors_per_document < 1:
        raise AssessmentError("at least one assessor judges each document")
    plan = _plan(study)
    plan.assessors_per_document = assessors_per_document
    plan.save(update_fields=["assessors_per_document"])
    _allocate(study, rebalance=True)
    return plan


def _allocate(study: Study, *, rebalance: bool = False) -> None:
    """Give each pool document min(k, assessors) assessors, least-loaded first.

    A growing pool only adds allocations, so nobody's list changes under them while they work. When the
    team or k changes (`rebalance`), unjudged allocations are dealt again so the work is shared evenly;
    allocations already judged are never withdrawn."""
    members = list(study.assessors.order_by("id"))
    if not members:
        return
    want = min(_plan(study).assessors_per_document, len(members))
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
    fresh = []
    for pool_document_id in (
        PoolDocument.objects.filter(pool__scenario__study=study).order_by("id").values_list("id", flat=True)
    ):
        taken = {a.assessor_id for a in current[pool_document_id]}
        candidates = sorted((m for m in members if m.id not in taken), key=lambda m: (load[m.id], m.id))
        for member in candidates[: max(want - len(taken), 0)]:
            fresh.append(AssessorAssignment(assessor=member, pool_document_id=pool_document_id))
            load[member.id] += 1
    AssessorAssignment.objects.bulk_create(fresh)


def _order_key(seed: str, pool_document_id: int) -> str:
    return hashlib.sha256(f"{seed}:{pool_document_id}".encode()).hexdigest()


def assessor_queue(*, membership: StudyAssessor, scenario: Scenario) -> list[PoolDocument]:
    """The pool documents this assessor judges for the scenario, in their own shuffled order: a hash of their
    seed and the document, so the order is stable across visits, differs between assessors, owes nothing to
    participants' rankings, and a grown pool slots new documents in without moving the old ones."""
    documents = PoolDocument.objects.filter(
        pool__scenario=scenario, assessor_assignments__assessor=membership
    ).select_related("document")
    return sorted(documents, key=lambda pd: _order_key(membership.order_seed, pd.id))


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


# --- Adjudication ---------------------------------------------------------------------------------------


@dataclass
class DocumentGrades:
    """The assessors' grades of one pool document, in the study's assessor order (membership id)."""

    pool_document: PoolDocument
    grades: list[tuple[StudyAssessor, int]]
    expected: int  # how many assessors are allocated

    @property
    def complete(self) -> bool:
        return bool(self.grades) and len(self.grades) >= self.expected

    @property
    def spread(self) -> int:
        values = [grade for _member, grade in self.grades]
        return max(values) - min(values) if values else 0


def _document_grades(study: Study, scenario: Scenario | None = None) -> list[DocumentGrades]:
    """Every pool document of the study (or scenario) with its grades, ordered by scenario then document."""
    members = {member.user_id: member for member in study.assessors.select_related("user")}
    pool_documents = PoolDocument.objects.filter(pool__scenario__study=study).select_related(
        "document", "pool__scenario"
    )
    if scenario is not None:
        pool_documents = pool_documents.filter(pool__scenario=scenario)
    expected = Counter(
        AssessorAssignment.objects.filter(assessor__study=study).values_list("pool_document_id", flat=True)
    )
    grades: dict[int, list] = defaultdict(list)
    for pool_document_id, user_id, grade in AssessorJudgment.objects.filter(
        pool_document__pool__scenario__study=study
    ).values_list("pool_document_id", "assessor_id", "grade"):
        if user_id in members:
            grades[pool_document_id].append((members[user_id], grade))
    rows = [
        DocumentGrades(pd, sorted(grades[pd.id], key=lambda pair: pair[0].id), expected[pd.id])
        for pd in pool_documents
    ]
    rows.sort(key=lambda row: (row.pool_document.pool.scenario_id, row.pool_document.id))
    return rows


@dataclass
class AdjudicationResult:
    decided: Counter = field(default_factory=Counter)  # method -> count
    to_researcher: list[DocumentGrades] = field(default_factory=list)
    awaiting_judgments: int = 0
    kept_by_hand: int = 0


@transaction.atomic
def adjudicate(*, study: Study, preset: str, decided_by) -> AdjudicationResult:
    """Settle every completely judged pool document by a preset; what the preset leaves goes to the researcher.

    Unanimous documents are "agreed" whatever the preset. Decisions made by hand are kept; the preset's own
    earlier decisions are recomputed (grades may have changed). Presets:
    - "2002": a one-point spread (max - min = 1) takes the grade of the judges in turn: a rotation over the
      study's assessors (invitation order) walks the one-point disagreements in scenario, document order and
      takes the next judge in the rotation who graded the document (Järvelin & Kekäläinen 2002, 3.1: "the
      assessment was chosen from each judge in turn"); a spread of two or more goes to the researcher.
    - "majority": a grade given by more than half of the document's assessors; otherwise the researcher.
    - "researcher": every disagreement goes to the researcher.
    """
    if preset not in PRESETS:
        raise AssessmentError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
    rows = _document_grades(study)
    existing = {
        decision.pool_document_id: decision
        for decision in AdjudicationDecision.objects.filter(pool_document__pool__scenario__study=study)
    }
    by_hand = {
        pd_id
        for pd_id, decision in existing.items()
        if decision.method == AdjudicationDecision.Method.RESEARCHER
    }
    AdjudicationDecision.objects.filter(
        id__in=[d.id for pd_id, d in existing.items() if pd_id not in by_hand]
    ).delete()
    rotation = [member.id for member in study.assessors.order_by("id")]
    turn = 0
    now = timezone.now()
    result = AdjudicationResult()
    decisions = []

    def decide(row, grade, method, judged_by, note):
        decisions.append(
            AdjudicationDecision(
                pool_document=row.pool_document,
                grade=grade,
                method=method,
                preset=preset,
                judged_by=judged_by,
                decided_by=decided_by,
                note=note[:300],
                decided_at=now,
            )
        )
        result.decided[method] += 1

    for row in rows:
        if not row.grades:
            continue
        if not row.complete:
            result.awaiting_judgments += 1
            continue
        if row.pool_document.id in by_hand:
            result.kept_by_hand += 1
            continue
        values = [grade for _member, grade in row.grades]
        names = ", ".join(member.user.username for member, _grade in row.grades)
        if row.spread == 0:
            decide(
                row,
                values[0],
                AdjudicationDecision.Method.AGREED,
                row.grades[0][0].user,
                f"agreed by {names}",
            )
        elif preset == "2002" and row.spread == 1:
            judges = {member.id: (member, grade) for member, grade in row.grades}
            for step in range(len(rotation)):
                candidate = rotation[(turn + step) % len(rotation)]
                if candidate in judges:
                    turn = (turn + step + 1) % len(rotation)
                    member, grade = judges[candidate]
                    break
            decide(
                row,
                grade,
                AdjudicationDecision.Method.IN_TURN,
                member.user,
                f"one point apart; {member.user.username}'s turn",
            )
        elif preset == "majority" and Counter(values).most_common(1)[0][1] * 2 > len(values):
            grade, count = Counter(values).most_common(1)[0]
            decide(
                row, grade, AdjudicationDecision.Method.MAJORITY, None, f"{count} of {len(values)} assessors"
            )
        else:
            result.to_researcher.append(row)
    AdjudicationDecision.objects.bulk_create(decisions)
    return result


@transaction.atomic
def adjudication_decide(
    *, pool_document: PoolDocument, grade: int, decided_by, note: str = ""
) -> AdjudicationDecision:
    """The researcher's decision for one document; kept when a preset is run again."""
    study = pool_document.pool.scenario.study
    if grade not in study.grade_values():
        raise AssessmentError(f"grade {grade} is not in the study's scale")
    decision, _ = AdjudicationDecision.objects.update_or_create(
        pool_document=pool_document,
        defaults={
            "grade": grade,
            "method": AdjudicationDecision.Method.RESEARCHER,
            "preset": "",
            "judged_by": decided_by,
            "decided_by": decided_by,
            "note": note[:300],
            "decided_at": timezone.now(),
        },
    )
    return decision


# --- Reference versions ---------------------------------------------------------------------------------


@transaction.atomic
def reference_version_create(
    *,
    study: Study,
    judgments: Iterable[ReferenceJudgment],
    note: str = "",
    created_by=None,
    number: int | None = None,
    created_at=None,
) -> ReferenceVersion:
    """The one writer of reference versions: a new version (number + 1 unless `number` is given, as an archive
    import does) holding `judgments` (unsaved ReferenceJudgment rows; their version is set here).

    The version is announced (studies.signals.reference_version_committed, which re-scores the default run)
    only once the transaction has committed: announced earlier, the re-score compared the old version with a
    new one that had no rows yet, and left stale scores behind a "Done"."""
    Study.objects.select_for_update().filter(pk=study.pk).first()  # one new number at a time
    if number is None:
        number = (ReferenceVersion.objects.filter(study=study).aggregate(top=Max("number"))["top"] or 0) + 1
    version = ReferenceVersion.objects.create(
        study=study,
        number=number,
        note=note[:300],
        created_by=created_by,
        **({"created_at": created_at} if created_at else {}),
    )
    rows = list(judgments)
    for row in rows:
        row.version = version
    ReferenceJudgment.objects.bulk_create(rows, batch_size=2000)
    study_id = study.pk
    transaction.on_commit(
        lambda: reference_version_committed.send(sender=ReferenceVersion, version=version, study_id=study_id),
        robust=True,  # the version is committed whatever a listener does; a failure is logged
    )
    return version


PUBLISH_MODES = {
    "merge": "Merge into a version: the adjudicated grades override its grades, its other judgments are kept",
    "replace": "Replace: the new version holds only the adjudicated grades",
}


@dataclass
class TopicChange:
    """How one topic's judgments differ between the latest version and the version a publication makes."""

    topic_id: str
    scenario: str  # the scenario's code, "" for a topic that is no scenario's
    added: int = 0
    changed: int = 0
    removed: int = 0
    kept: int = 0  # same grade in both


@dataclass
class PublishPlan:
    """What `reference_version_publish` would write: the rows of the new version and how they differ from
    the latest version (the one scores use now). `digest` names the plan, so a publication confirmed from a
    preview is refused if anything changed since."""

    mode: str
    base: ReferenceVersion | None  # merged into (None: replace, or no version yet)
    latest: ReferenceVersion | None
    number: int  # the new version's
    decisions: int  # adjudicated documents in the new version
    pending: int  # completely judged, undecided: left out (a merge keeps the base's grade)
    rows: dict[tuple[str, int], ReferenceJudgment]
    topics: list[TopicChange]
    digest: str

    def total(self, what: str) -> int:
        return sum(getattr(change, what) for change in self.topics)

    @property
    def totals(self) -> dict[str, int]:
        return {what: self.total(what) for what in ("added", "changed", "removed", "kept")}


def reference_version_publish_plan(
    *, study: Study, mode: str = "merge", base_number: int | None = None, allow_pending: bool = False
) -> PublishPlan:
    """Plan a publication of the adjudicated grades (nothing is written). `mode` "merge": the version
    `base_number` (default: the latest) with the adjudicated grades overriding its grades for the same topic
    and document, every other judgment kept; "replace": the adjudicated grades alone. Refuses while
    completely judged disagreements wait for the researcher, unless `allow_pending` (they are left out)."""
    if mode not in PUBLISH_MODES:
        raise AssessmentError(f"unknown publishing mode {mode!r}; use one of {', '.join(PUBLISH_MODES)}")
    versions = ReferenceVersion.objects.filter(study=study)
    latest = versions.order_by("-number").first()
    base = None
    if mode == "merge":
        base = versions.filter(number=base_number).first() if base_number is not None else latest
        if base_number is not None and base is None:
            raise AssessmentError(f"the study has no reference version {base_number} to merge into")
    elif base_number is not None:
        raise AssessmentError("a replacement merges into no version; leave the version out")
    decisions = list(
        AdjudicationDecision.objects.filter(pool_document__pool__scenario__study=study).select_related(
            "pool_document__pool__scenario"
        )
    )
    if not decisions:
        raise AssessmentError("nothing is adjudicated yet: run a preset or decide by hand first")
    decided = {decision.pool_document_id for decision in decisions}
    pending = [row for row in _document_grades(study) if row.complete and row.pool_document.id not in decided]
    if pending and not allow_pending:
        raise AssessmentError(f"{len(pending)} judged documents have no decision yet; decide them first")
    number = (latest.number if latest else 0) + 1
    rows: dict[tuple[str, int], ReferenceJudgment] = {}
    if base is not None:
        for judgment in base.judgments.all():
            rows[(judgment.topic_id, judgment.document_id)] = ReferenceJudgment(
                topic_id=judgment.topic_id,
                document_id=judgment.document_id,
                grade=judgment.grade,
                judged_by_id=judgment.judged_by_id,
                source=judgment.source,
            )
    for decision in decisions:
        topic, document_id = decision.pool_document.pool.scenario.topic_id, decision.pool_document.document_id
        rows[(topic, document_id)] = ReferenceJudgment(
            topic_id=topic,
            document_id=document_id,
            grade=decision.grade,
            judged_by_id=decision.judged_by_id,
            source=f"adjudication v{number} ({decision.method})",
        )
    now = {key: row.grade for key, row in rows.items()}
    before = dict(
        ((topic, document_id), grade)
        for topic, document_id, grade in (
            latest.judgments.values_list("topic_id", "document_id", "grade") if latest else []
        )
    )
    scenarios = dict(study.scenarios.values_list("topic_id", "code"))
    changes: dict[str, TopicChange] = {}
    for key in now.keys() | before.keys():
        change = changes.setdefault(key[0], TopicChange(key[0], scenarios.get(key[0], "")))
        if key not in before:
            change.added += 1
        elif key not in now:
            change.removed += 1
        elif now[key] != before[key]:
            change.changed += 1
        else:
            change.kept += 1
    fingerprint = repr((mode, base and base.number, latest and latest.number, sorted(now.items())))
    return PublishPlan(
        mode=mode,
        base=base,
        latest=latest,
        number=number,
        decisions=len(decisions),
        pending=len(pending),
        rows=rows,
        topics=sorted(changes.values(), key=lambda change: (change.scenario == "", change.topic_id)),
        digest=hashlib.sha256(fingerprint.encode()).hexdigest()[:16],
    )


@transaction.atomic
def reference_version_publish(
    *,
    study: Study,
    created_by,
    note: str = "",
    allow_pending: bool = False,
    mode: str = "merge",
    base_number: int | None = None,
    expected_digest: str | None = None,
) -> ReferenceVersion:
    """Publish the adjudicated grades as a new reference version (see reference_version_publish_plan for
    `mode`, `base_number` and `allow_pending`). With `expected_digest` (the digest of the plan the researcher
    previewed) it refuses if the plan changed since: a grade decided or a version published meanwhile."""
    Study.objects.select_for_update().filter(pk=study.pk).first()  # the plan and the number stay true
    plan = reference_version_publish_plan(
        study=study, mode=mode, base_number=base_number, allow_pending=allow_pending
    )
    if expected_digest is not None and expected_digest != plan.digest:
        raise AssessmentError(
            "the adjudication or the reference versions changed since the preview; look again"
        )
    if not note:
        into = f" merged into v{plan.base.number}" if plan.base else ""
        note = f"adjudication of {plan.decisions} documents{into}"
    return reference_version_create(
        study=study, judgments=plan.rows.values(), note=note, created_by=created_by, number=plan.number
    )


def reference_version_qrels(*, version: ReferenceVersion) -> str:
    """The version as TREC qrels: `topic 0 docid grade`, sorted by topic then document id."""
    rows = version.judgments.values_list("topic_id", "document__external_id", "grade")
    return "".join(f"{topic} 0 {docid} {grade}\n" for topic, docid, grade in sorted(rows))


@transaction.atomic
def reference_version_import_qrels(
    *, study: Study, lines: Iterable[str], path: str, created_by, note: str = ""
) -> ReferenceVersion:
    """A new reference version from a qrels file, all or nothing: InputError names file and line for a bad
    line, an unknown document or a grade outside the study's scale. Judgments of topics that are no
    scenario's are kept as they are (they score nothing), so a version exported as qrels, which may hold a
    whole collection's topics, imports again unchanged; a file with no scenario topic at all is refused."""
    entries, found = _qrels_entries(study, lines, path, other_topics=True)
    scale = set(study.grade_values())
    for entry in entries:
        if not reference_grade_allowed(entry.grade, scale):  # negative grades are kept as judged
            raise InputError(
                path, entry.line, f"grade {entry.grade} is not in the study's scale {sorted(scale)} (or -9..-1)"
            )
    return reference_version_create(
        study=study,
        judgments=(
            ReferenceJudgment(
                topic_id=entry.topic,
                document=found[entry.docid],
                grade=entry.grade,
                judged_by=None,
                source=f"qrels {path}"[:200],
            )
            for entry in entries
        ),
        note=note or f"imported from {path}",
        created_by=created_by,
    )


# --- Reads ----------------------------------------------------------------------------------------------


def reference_version_other_topics(*, version: ReferenceVersion) -> tuple[int, int]:
    """(judgments, topics) of the version whose topic is no scenario's: kept, but they score nothing."""
    others = version.judgments.exclude(topic_id__in=version.study.scenarios.values("topic_id"))
    return others.count(), others.values("topic_id").distinct().count()


def score_text(value: float | None) -> str:
    """A kappa or alpha for a page: three decimals, "n/a" when undefined."""
    return "n/a" if value is None or math.isnan(value) else f"{value:.3f}"


def percent_text(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{100 * value:.0f}%"


class _Texts:
    """`obj.text.<field>`: the field formatted for a page (percent for `percent`, else score_text)."""

    @property
    def text(self) -> dict[str, str]:
        return {
            name: percent_text(value) if name == "percent" else score_text(value)
            for name, value in vars(self).items()
            if isinstance(value, float)
        }


@dataclass
class AssessorProgress:
    membership: StudyAssessor
    assigned: int
    judged: int

    @property
    def percent(self) -> int:
        return round(100 * self.judged / self.assigned) if self.assigned else 0


@dataclass
class ScenarioProgress:
    scenario: Scenario
    pool: AssessmentPool | None
    documents: int = 0
    complete: int = 0  # every allocated assessor judged it
    disagreements: int = 0
    decided: int = 0


def assessment_progress(*, study: Study) -> tuple[list[AssessorProgress], list[ScenarioProgress]]:
    members = list(study.assessors.select_related("user"))
    assigned = Counter(
        AssessorAssignment.objects.filter(assessor__study=study).values_list("assessor_id", flat=True)
    )
    judged = Counter()
    allocated = set(
        AssessorAssignment.objects.filter(assessor__study=study).values_list(
            "assessor__user_id", "pool_document_id"
        )
    )
    member_of_user = {member.user_id: member.id for member in members}
    for user_id, pool_document_id in AssessorJudgment.objects.filter(
        pool_document__pool__scenario__study=study
    ).values_list("assessor_id", "pool_document_id"):
        if (user_id, pool_document_id) in allocated:
            judged[member_of_user[user_id]] += 1
    per_assessor = [AssessorProgress(member, assigned[member.id], judged[member.id]) for member in members]
    pools = {pool.scenario_id: pool for pool in AssessmentPool.objects.filter(scenario__study=study)}
    decided = set(
        AdjudicationDecision.objects.filter(pool_document__pool__scenario__study=study).values_list(
            "pool_document_id", flat=True
        )
    )
    per_scenario = {s.id: ScenarioProgress(s, pools.get(s.id)) for s in study.scenarios.order_by("id")}
    for row in _document_grades(study):
        progress = per_scenario[row.pool_document.pool.scenario_id]
        progress.documents += 1
        progress.complete += row.complete
        progress.disagreements += row.complete and row.spread > 0
        progress.decided += row.pool_document.id in decided
    return per_assessor, list(per_scenario.values())


def disagreements(
    *, study: Study, scenario: Scenario | None = None
) -> list[tuple[DocumentGrades, AdjudicationDecision | None]]:
    """Completely judged documents whose assessors disagree, with their decision if any."""
    decisions = {
        decision.pool_document_id: decision
        for decision in AdjudicationDecision.objects.filter(pool_document__pool__scenario__study=study)
    }
    return [
        (row, decisions.get(row.pool_document.id))
        for row in _document_grades(study, scenario)
        if row.complete and row.spread > 0
    ]


@dataclass
class PairAgreement(_Texts):
    first: str
    second: str
    n: int
    percent: float
    kappa_linear: float
    kappa_quadratic: float
    matrix: np.ndarray

    def matrix_rows(self):
        return list(enumerate(self.matrix.tolist()))


@dataclass
class AgreementBlock(_Texts):
    """Agreement for one scenario, or overall (scenario None)."""

    scenario: Scenario | None
    units: int  # documents with at least two grades
    pairs: list[PairAgreement]
    alpha_ordinal: float
    alpha_interval: float


def _agreement_block(
    scenario, rows: list[DocumentGrades], members: list[StudyAssessor], scale: list[int]
) -> AgreementBlock:
    column = {member.id: i for i, member in enumerate(members)}
    data = np.full((len(members), len(rows)), np.nan)
    for unit, row in enumerate(rows):
        for member, grade in row.grades:
            data[column[member.id], unit] = grade
    pairs = []
    for (i, first), (j, second) in itertools.combinations(enumerate(members), 2):
        both = ~np.isnan(data[i]) & ~np.isnan(data[j])
        if not both.any():
            continue
        a, b = data[i, both].astype(int), data[j, both].astype(int)
        matrix = agreement.confusion_matrix(a, b, scale)
        pairs.append(
            PairAgreement(
                first.user.username,
                second.user.username,
                int(both.sum()),
                agreement.percent_agreement(a, b),
                agreement.kappa_from_matrix(matrix, "linear"),
                agreement.kappa_from_matrix(matrix, "quadratic"),
                matrix,
            )
        )
    units = int(((~np.isnan(data)).sum(axis=0) >= 2).sum()) if rows else 0
    alpha = {
        level: agreement.krippendorff_alpha(data, level, values=scale) if rows else float("nan")
        for level in ("ordinal", "interval")
    }
    return AgreementBlock(scenario, units, pairs, alpha["ordinal"], alpha["interval"])


def assessor_agreement(*, study: Study) -> list[AgreementBlock]:
    """Per scenario, then overall (last, scenario None): weighted kappa (linear, quadratic) with the confusion
    matrix for every pair of assessors on the documents both graded, and Krippendorff's alpha (ordinal,
    interval) over all assessors."""
    members = list(study.assessors.select_related("user").order_by("id"))
    scale = study.grade_values()
    rows = [row for row in _document_grades(study) if len(row.grades) >= 2]
    blocks = []
    for scenario in study.scenarios.order_by("id"):
        mine = [row for row in rows if row.pool_document.pool.scenario_id == scenario.id]
        blocks.append(_agreement_block(scenario, mine, members, scale))
    blocks.append(_agreement_block(None, rows, members, scale))
    return blocks


@dataclass
class ParticipantAgreement(_Texts):
    label: str  # participant code or scenario code
    n: int  # documents the participant graded that the reference grades
    percent: float
    kappa_linear: float
    kappa_quadratic: float
    missed: int  # shown to them, relevant in the reference, not judged relevant by them


def participant_reference_agreement(
    *, study: Study, version: ReferenceVersion | None = None
) -> tuple[ReferenceVersion | None, list[ParticipantAgreement], list[ParticipantAgreement]]:
    """Participants' own grades against a reference version (the newest by default): per participant and
    per scenario. Documents the reference does not grade are left out; a retaken scenario counts its
    latest judgment."""
    version = version or study.reference_versions.order_by("-number").first()
    if version is None:
        return None, [], []
    reference = {
        (topic, document_id): grade
        for topic, document_id, grade in version.judgments.values_list("topic_id", "document_id", "grade")
    }
    scale = study.grade_values()
    latest: dict[tuple, tuple] = {}
    for code, scenario_code, topic, document_id, grade, updated in Judgment.objects.filter(
        session__assignment__participant__study=study
    ).values_list(
        "session__assignment__participant__code",
        "session__assignment__scenario__code",
        "session__assignment__scenario__topic_id",
        "document_id",
        "grade",
        "updated_at",
    ):
        key = (code, scenario_code, topic, document_id)
        if key not in latest or latest[key][1] < updated:
            latest[key] = (grade, updated)
    judged_relevant = {key for key, (grade, _updated) in latest.items() if grade >= 1}
    pairs_by: dict[str, dict[str, list]] = {"participant": defaultdict(list), "scenario": defaultdict(list)}
    for (code, scenario_code, topic, document_id), (grade, _updated) in latest.items():
        if (topic, document_id) in reference:
            pair = (grade, reference[(topic, document_id)])
            pairs_by["participant"][code].append(pair)
            pairs_by["scenario"][scenario_code].append(pair)
    missed = {"participant": Counter(), "scenario": Counter()}
    shown = set(
        ShownResult.objects.filter(query__session__assignment__participant__study=study).values_list(
            "query__session__assignment__participant__code",
            "query__session__assignment__scenario__code",
            "query__session__assignment__scenario__topic_id",
            "document_id",
        )
    )
    for code, scenario_code, topic, document_id in shown:
        if (
            reference.get((topic, document_id), 0) >= 1
            and (code, scenario_code, topic, document_id) not in judged_relevant
        ):
            missed["participant"][code] += 1
            missed["scenario"][scenario_code] += 1

    def table(kind, labels):
        out = []
        for label in labels:
            pairs = pairs_by[kind].get(label, [])
            a = [p for p, _r in pairs]
            b = [r for _p, r in pairs]
            matrix = agreement.confusion_matrix(a, b, scale)
            out.append(
                ParticipantAgreement(
                    label,
                    len(pairs),
                    agreement.percent_agreement(a, b),
                    agreement.kappa_from_matrix(matrix, "linear"),
                    agreement.kappa_from_matrix(matrix, "quadratic"),
                    missed[kind][label],
                )
            )
        return out

    participants = list(study.participants.order_by("enrolment_index").values_list("code", flat=True))
    scenarios = list(study.scenarios.order_by("id").values_list("code", flat=True))
    return version, table("participant", participants), table("scenario", scenarios)
