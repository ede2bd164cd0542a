"""Assessor work: the scenarios each assessor judges and the guidelines they read on their form.
Writes and their audit entries in one transaction; the allocation they change is studies/assessment/
assessors.py's. docs/assessing.md ("Assessors", "What an assessor sees")."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from studies.assessment.assessors import allocate, scenario_teams
from studies.assessment.highlighting import highlight_terms
from studies.errors import AssessmentError
from studies.models import (
    ASSESSORS_WHO_ARE_PEOPLE,
    AssessmentGuidelines,
    AssessmentPlan,
    AssessorScenario,
    AuditAction,
    AuditEntry,
    CollectionTopic,
    Query,
    Scenario,
    Study,
    StudyAssessor,
)


@transaction.atomic
def assessor_scenarios_set(*, membership: StudyAssessor, scenario_codes: list[str], by) -> list[Scenario]:
    """The scenarios this assessor judges (none: all of them). Unjudged work is dealt again; documents they
    already judged stay theirs. A code that is not the study's scenario refuses the whole change."""
    if membership.is_machine:
        raise AssessmentError(
            f"{membership.user.username} is a machine assessor: it judges by runs, not scenarios"
        )
    study = membership.study
    by_code = {scenario.code: scenario for scenario in study.scenarios.all()}
    unknown = [code for code in scenario_codes if code not in by_code]
    if unknown:
        raise AssessmentError(f"no scenario {', '.join(map(repr, unknown))} in this study")
    practice = [code for code in scenario_codes if by_code[code].practice]
    if practice:
        raise AssessmentError(
            f"scenarios: {', '.join(map(repr, practice))} is a practice task: never scored, so not assessed"
        )
    chosen = sorted({by_code[code] for code in scenario_codes}, key=lambda scenario: scenario.id)
    before = sorted(
        membership.chosen_scenarios.values_list("scenario__code", flat=True).order_by("scenario_id")
    )
    after = [scenario.code for scenario in chosen]
    if before == after:
        return chosen
    membership.chosen_scenarios.all().delete()
    AssessorScenario.objects.bulk_create(
        AssessorScenario(assessor=membership, scenario=scenario) for scenario in chosen
    )
    AuditEntry.objects.create(
        study=study,
        action=AuditAction.ASSESSOR_SCENARIOS_CHANGED,
        detail={
            "assessor": membership.user.username,
            "old": before,
            "new": after,
            "by": getattr(by, "username", ""),
        },
    )
    allocate(study, rebalance=True)
    return chosen


@transaction.atomic
def guidelines_set(*, study: Study, scenario: Scenario | None, text: str, by) -> AssessmentGuidelines | None:
    """The study's guidelines (scenario None) or one scenario's, kept exactly as written (the form escapes
    them). A change leaves an audit entry with the text it replaced; the same text changes nothing (None
    when there are still no guidelines)."""
    if scenario is not None and scenario.study_id != study.pk:
        raise AssessmentError(f"scenario {scenario.code!r} is not this study's")
    guidelines = AssessmentGuidelines.objects.filter(study=study, scenario=scenario).first()
    old = guidelines.text if guidelines else ""
    if old == text:
        return guidelines
    now = timezone.now()
    if guidelines is None:
        guidelines = AssessmentGuidelines.objects.create(
            study=study, scenario=scenario, text=text, updated_by=by, updated_at=now
        )
    else:
        guidelines.text, guidelines.updated_by, guidelines.updated_at = text, by, now
        guidelines.save(update_fields=["text", "updated_by", "updated_at"])
    AuditEntry.objects.create(
        study=study,
        action=AuditAction.GUIDELINES_CHANGED,
        detail={
            "scenario": scenario.code if scenario else "",
            "old_text": old,
            "by": getattr(by, "username", ""),
        },
    )
    return guidelines


# --- Reads ------------------------------------------------------------------------------------------------


def guidelines_texts(*, study: Study) -> dict[int | None, str]:
    """scenario id (None for the study's) -> guidelines text, for the assessment page's form."""
    return dict(study.assessment_guidelines.values_list("scenario_id", "text"))


def guidelines_for(*, scenario: Scenario) -> list[tuple[str, str]]:
    """What the assessor's form shows above the document, in order: (heading, text) of the study's
    guidelines, then the scenario's; empty texts left out."""
    texts = guidelines_texts(study=scenario.study)
    shown = [
        ("Guidelines", texts.get(None, "")),
        (f"Guidelines for {scenario.code}", texts.get(scenario.id, "")),
    ]
    return [(heading, text) for heading, text in shown if text.strip()]


@dataclass
class AssessorScenarios:
    membership: StudyAssessor
    codes: list[str]  # the scenarios they chose; empty: all


def assessor_scenario_choices(*, study: Study) -> list[AssessorScenarios]:
    """Each person assessor with the scenarios they chose (machines judge by runs)."""
    members = list(study.assessors.filter(ASSESSORS_WHO_ARE_PEOPLE).select_related("user").order_by("id"))
    codes: dict[int, list[str]] = {member.id: [] for member in members}
    for assessor_id, code in AssessorScenario.objects.filter(assessor__in=members).values_list(
        "assessor_id", "scenario__code"
    ):
        codes[assessor_id].append(code)
    return [AssessorScenarios(member, codes[member.id]) for member in members]


def scenarios_without_assessor(*, study: Study) -> list[Scenario]:
    """Scenarios no person assessor judges while the study has some: their pools would stay unjudged."""
    members = list(study.assessors.filter(ASSESSORS_WHO_ARE_PEOPLE).order_by("id"))
    if not members:
        return []
    teams = scenario_teams(study, members)
    return [scenario for scenario in study.scenarios.order_by("id") if not teams.get(scenario.id)]


def scenario_highlight_terms(*, scenario: Scenario) -> frozenset[str]:
    """The words the assessor's form marks: the scenario's title and its topic's title in the collection's
    topics (the query of a TREC topic), and, when the plan says so, the queries participants issued for the
    scenario. Never anything of participants' grades."""
    texts = [scenario.title]
    if scenario.study.collection_id is not None:
        texts += CollectionTopic.objects.filter(
            collection_id=scenario.study.collection_id, topic_id=scenario.topic_id
        ).values_list("title", flat=True)
    if AssessmentPlan.objects.filter(study_id=scenario.study_id, highlight_participant_queries=True).exists():
        texts += Query.objects.filter(session__assignment__scenario=scenario).values_list("text", flat=True)
    return highlight_terms(texts)
