"""Reads of expert assessment: each pool document's grades, an assessor's queue, progress, disagreements."""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass

from studies.models import (
    ASSESSORS_WHO_ARE_PEOPLE,
    AdjudicationDecision,
    AssessmentPool,
    AssessorAssignment,
    AssessorJudgment,
    PoolDocument,
    ReferenceVersion,
    Scenario,
    Study,
    StudyAssessor,
)


def _order_key(seed: str, pool_document_id: int) -> str:
    return hashlib.sha256(f"{seed}:{pool_document_id}".encode()).hexdigest()


def pool_documents_assessed(*, study_id: int):
    """The pool documents experts judge: those of the study's scored scenarios. A practice task is never
    scored, so its documents are not pooled, dealt to assessors, listed to them or sent to a model (issue
    37); a pool it has from before stays, unused."""
    return PoolDocument.objects.filter(pool__scenario__study_id=study_id, pool__scenario__practice=False)


def assessor_queue(*, membership: StudyAssessor, scenario: Scenario) -> list[PoolDocument]:
    """The pool documents this assessor judges for the scenario, in their own shuffled order: a hash of their
    seed and the document, so the order is stable across visits, differs between assessors, owes nothing to
    participants' rankings, and a grown pool slots new documents in without moving the old ones."""
    documents = (
        pool_documents_assessed(study_id=scenario.study_id)
        .filter(pool__scenario=scenario, assessor_assignments__assessor=membership)
        .select_related("document")
    )
    return sorted(documents, key=lambda pd: _order_key(membership.order_seed, pd.id))


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


def document_grades(
    study: Study, scenario: Scenario | None = None, *, machines: bool = False
) -> list[DocumentGrades]:
    """Every pool document of the study (or scenario) with its grades, ordered by scenario then document.

    Only people's grades unless `machines`: adjudication, progress and disagreements are the humans' work,
    and a machine assessor's grades reach a reference only by an explicit rule; agreement reads
    them beside the humans'."""
    members_of_study = study.assessors.select_related("user")
    if not machines:
        members_of_study = members_of_study.filter(ASSESSORS_WHO_ARE_PEOPLE)
    members = {member.user_id: member for member in members_of_study}
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


def reference_version_other_topics(*, version: ReferenceVersion) -> tuple[int, int]:
    """(judgments, topics) of the version whose topic is no scenario's: kept, but they score nothing."""
    others = version.judgments.exclude(topic_id__in=version.study.scenarios.values("topic_id"))
    return others.count(), others.values("topic_id").distinct().count()


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
    double_judged: int = 0  # dealt to two or more assessors
    disagreements: int = 0
    decided: int = 0


def assessment_progress(*, study: Study) -> tuple[list[AssessorProgress], list[ScenarioProgress]]:
    members = list(study.assessors.filter(ASSESSORS_WHO_ARE_PEOPLE).select_related("user"))
    assigned = Counter(
        AssessorAssignment.objects.filter(assessor__study=study).values_list("assessor_id", flat=True)
    )
    judged: Counter[int] = Counter()
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
    for row in document_grades(study):
        progress = per_scenario[row.pool_document.pool.scenario_id]
        progress.documents += 1
        progress.double_judged += row.expected >= 2
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
        for row in document_grades(study, scenario)
        if row.complete and row.spread > 0
    ]


def scenario_with_pool(*, study_id: int, scenario_id: int) -> Scenario | None:
    """The study's scenario, with its study, if a researcher has built its assessment pool; else None (only
    built pools grow by themselves, and a practice task's never does)."""
    return (
        Scenario.objects.select_related("study")
        .filter(pk=scenario_id, study_id=study_id, assessment_pool__isnull=False, practice=False)
        .first()
    )
