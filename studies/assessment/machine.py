"""Machine assessors (issue 30): what a reference version records about one when its grades enter it, and
the explicit rules by which they may enter (docs/assessing.md, "Reference versions")."""

from __future__ import annotations

from collections.abc import Sequence

from studies.errors import AssessmentError
from studies.models import AssessorJudgment, Study, StudyAssessor

# The only ways a machine assessor's grades enter a reference version; none chosen, none enter.
FILL_UNJUDGED = "fill_unjudged"
BREAK_TIES = "break_ties"
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
    a language model, the endpoint's model and the prompt's hash (filled in from the LLM assessor's
    settings)."""
    provenance: dict = {
        "assessor": membership.user.get_username(),
        "assessor_id": membership.pk,
        "kind": "llm" if membership.is_machine else "human",
    }
    return provenance


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
    grade nearest to it; of two equally near, the lower (people judge more strictly than models, issue 30,
    and the lower grade claims less relevance than anyone is sure of)."""
    if machine in people:
        return machine
    return min(people, key=lambda grade: (abs(grade - machine), grade))


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


def provenance_text(facts: dict) -> str:
    """A version's provenance in words, for the version lists ("" when none was recorded)."""
    if not facts:
        return ""
    kept = (
        f"{facts['machine_grades_kept']} machine grades kept from v{facts.get('machine_grades_kept_from')}"
        if facts.get("machine_grades_kept")
        else ""
    )
    rules = facts.get("machine_rules")
    if not isinstance(rules, list):
        return kept or ", ".join(f"{key}: {value}" for key, value in sorted(facts.items()))
    assessor = facts.get("machine_assessor") or {}
    who = str(assessor.get("assessor", "a machine assessor"))
    model = assessor.get("model")
    prompt = assessor.get("prompt_hash") or assessor.get("prompt_sha256")
    extra = "".join([f", model {model}" if model else "", f", prompt {str(prompt)[:12]}" if prompt else ""])
    counts = {
        FILL_UNJUDGED: f"{facts.get('documents_filled', 0)} documents filled",
        BREAK_TIES: f"{facts.get('ties_broken', 0)} ties broken",
    }
    done = "; ".join(counts.get(rule, str(rule)) for rule in rules) or "no rule"
    return f"machine grades by {who}{extra}: {done}" + (f"; {kept}" if kept else "")


def has_machine_grades(facts: dict) -> bool:
    """Whether a version's provenance says machine grades are in it (by a rule, or kept from its base)."""
    return any(facts.get(key) for key in ("documents_filled", "ties_broken", "machine_grades_kept"))


def versions_with_provenance(study: Study) -> list:
    """The study's reference versions, newest first, each with `provenance_text` and `machine_grades` (whether
    machine grades are in it), for the version lists."""
    versions = list(study.reference_versions.order_by("-number"))
    for version in versions:
        version.provenance_text = provenance_text(version.facts)
        version.machine_grades = has_machine_grades(version.facts)
    return versions
