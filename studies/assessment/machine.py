"""Machine assessors: what a reference version records about one when its grades enter it, and
the explicit rules by which they may enter (docs/assessing.md, "Reference versions")."""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence

from studies.assessment.llm.prompts import prompt_hash
from studies.assessment.selectors import DocumentGrades
from studies.errors import AssessmentError
from studies.models import AssessorJudgment, LLMAssessor, LLMAudit, ReferenceJudgment, Study, StudyAssessor
from studies.models.references import BREAK_TIES, FILL_UNJUDGED

# The only ways a machine assessor's grades enter a reference version; none chosen, none enter.
MACHINE_RULES = {
    FILL_UNJUDGED: (
        "Fill unjudged documents: a pool document with no decision and not yet judged by every allocated "
        "person takes the machine's grade (never one the version already holds)"
    ),
    BREAK_TIES: (
        "Break ties: a disagreement the adjudication left undecided takes the machine's grade when a person "
        "gave it, else the people's grade nearest to it (the lower of two equally near)"
    ),
}
MACHINE_RULE_SOURCES = {FILL_UNJUDGED: "machine fill", BREAK_TIES: "machine tie-break"}
MACHINE_SOURCE_PREFIX = "machine "  # every ReferenceJudgment.source a rule writes starts so


def machine_assessor_provenance(membership: StudyAssessor) -> dict:
    """The facts a reference version keeps about a machine assessor whose grades it took: who it is and, for
    a language model, the model, the endpoint's host (never its key, nor the URL's path or query) and the
    prompt's hash (studies.assessment.llm.prompts.prompt_hash: the template's source and the model)."""
    provenance: dict = {
        "assessor": membership.user.get_username(),
        "assessor_id": membership.pk,
        "kind": "llm" if membership.is_machine else "human",
    }
    if membership.is_machine:
        llm = membership.llm
        provenance |= {
            "model": llm.model_name,
            "endpoint_host": urllib.parse.urlsplit(llm.endpoint_url).hostname or "",
            "prompt_hash": prompt_hash(llm.prompt_template, llm.model_name),
            "robustness_audit": robustness_audit_provenance(llm),
        }
    return provenance


def robustness_audit_provenance(llm: LLMAssessor) -> dict | None:
    """The assessor's latest finished robustness audit (docs/assessing.md, "Robustness audit"): its id,
    verdict, seed and end, and whether it asked the model the way the assessor asks now (the same prompt
    hash); None when the assessor was never audited to the end, which a reader should know too."""
    audit = llm.audits.filter(status=LLMAudit.Status.DONE).order_by("-finished_at", "-id").first()
    if audit is None:
        return None
    return {
        "audit": audit.pk,
        "verdict": audit.verdict,
        "seed": audit.seed,
        "finished_at": audit.finished_at.isoformat() if audit.finished_at else None,
        "same_prompt": audit.prompt_hash == prompt_hash(llm.prompt_template, llm.model_name),
    }


def machine_rules_checked(*, study: Study, machine: StudyAssessor | None, rules: Sequence[str]) -> tuple:
    """The rules in MACHINE_RULES' order, refused (AssessmentError naming what) when one is unknown, when a
    rule has no machine assessor to take grades from, or the assessor is no machine of this study. With no
    rule the machine is ignored: its grades never enter."""
    unknown = sorted(set(rules) - set(MACHINE_RULES))
    if unknown:
        raise AssessmentError(f"unknown machine rule {unknown[0]!r}; use {' or '.join(MACHINE_RULES)}")
    if not rules:
        return ()
    if machine is None:
        raise AssessmentError("a machine rule needs the machine assessor whose grades it takes")
    if machine.study_id != study.pk or not machine.is_machine:
        raise AssessmentError(f"{machine.user.get_username()} is not a machine assessor of this study")
    return tuple(rule for rule in MACHINE_RULES if rule in rules)


def machine_grades(*, machine: StudyAssessor) -> dict[int, int]:
    """The machine assessor's grade of each pool document of its study (pool document id -> grade)."""
    return dict(
        AssessorJudgment.objects.filter(
            assessor_id=machine.user_id, pool_document__pool__scenario__study_id=machine.study_id
        ).values_list("pool_document_id", "grade")
    )


def tie_broken(people: Sequence[int], machine: int) -> int:
    """The grade a tie takes under "break ties": the machine's when a person gave it, else the people's
    grade nearest to it; of two equally near, the lower (people judge more strictly than models,
    and the lower grade claims less relevance than anyone is sure of)."""
    if machine in people:
        return machine
    return min(people, key=lambda grade: (abs(grade - machine), grade))


def _judgment(row: DocumentGrades, grade: int, rule: str, machine: StudyAssessor, number: int):
    pool_document = row.pool_document
    return ReferenceJudgment(
        topic_id=pool_document.pool.scenario.topic_id,
        document_id=pool_document.document_id,
        grade=grade,
        judged_by_id=machine.user_id,
        source=f"{MACHINE_RULE_SOURCES[rule]} v{number}",
    )


def document_key(row: DocumentGrades) -> tuple[str, int]:
    return (row.pool_document.pool.scenario.topic_id, row.pool_document.document_id)


def machine_ties_broken(
    *, undecided: list[DocumentGrades], machine: StudyAssessor, grades: dict[int, int], number: int
) -> dict[tuple[str, int], ReferenceJudgment]:
    """ "break ties": the judgments of version `number` for the undecided disagreements the machine graded
    (`grades`: machine_grades), keyed (topic, document)."""
    return {
        document_key(row): _judgment(
            row,
            tie_broken([g for _m, g in row.grades], grades[row.pool_document.id]),
            BREAK_TIES,
            machine,
            number,
        )
        for row in undecided
        if row.complete and row.spread > 0 and row.pool_document.id in grades
    }


def machine_fills(
    *,
    undecided: list[DocumentGrades],
    held: set[tuple[str, int]],
    machine: StudyAssessor,
    grades: dict[int, int],
    number: int,
) -> dict[tuple[str, int], ReferenceJudgment]:
    """ "fill unjudged documents": the judgments of version `number` for the undecided documents people have
    not completely judged and the version does not already hold (`held`), that the machine graded."""
    return {
        document_key(row): _judgment(row, grades[row.pool_document.id], FILL_UNJUDGED, machine, number)
        for row in undecided
        if not row.complete and document_key(row) not in held and row.pool_document.id in grades
    }


def machine_rules_provenance(
    *, machine: StudyAssessor, rules: Sequence[str], filled: int, ties_broken: int
) -> dict:
    """A version's provenance when machine rules were chosen (even when they changed nothing: the choice
    is on record)."""
    return {
        "machine_rules": list(rules),
        "machine_assessor": machine_assessor_provenance(machine),
        "documents_filled": filled,
        "ties_broken": ties_broken,
    }
