"""Robustness audits of an LLM assessor (docs/assessing.md, "Robustness audit"): pool documents
whose relevance the people settled are sent to the assessor's model as they are and in seeded variants
(scoring.lib.judge_audit.variants), through the assessor's own grading path (runs.document_prompt, the same
template and passage length; client.chat_complete, the same address rules, deadline and breaker; the same
retries, pace and cost cap), and what it answered is held against the people
(scoring.lib.judge_audit.figures). The audit's grades are kept on its items, never as the assessor's
judgments: a variant is no document of the pool. The task (studies.tasks.llm_audit_task, on the `llm`
queue) takes the audit's id and calls `llm_audit_execute`."""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from decimal import Decimal

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from scoring.lib.judge_audit import (
    NON_RELEVANT_VARIANTS,
    ORIGINAL,
    RELEVANT_VARIANTS,
    Observation,
    audit_figures,
    variant_text,
)
from sessionlab.queueing import delay_on_commit, task_named
from studies.assessment.llm.client import chat_complete
from studies.assessment.llm.keys import api_key_decrypt
from studies.assessment.llm.prompts import GradeMap, grade_map_for, prompt_hash
from studies.assessment.llm.runs import Budget, Pace, document_prompt, request_body, retry_wait
from studies.assessment.selectors import document_grades
from studies.errors import AssessmentError
from studies.models import (
    ASSESSORS_WHO_ARE_PEOPLE,
    AuditAction,
    AuditEntry,
    LLMAssessor,
    LLMAudit,
    LLMAuditItem,
    LLMRequest,
    PoolDocument,
    Study,
)

logger = logging.getLogger(__name__)
Status = LLMAudit.Status
ACTIVE = (Status.QUEUED, Status.RUNNING)
DEFAULT_SEED = 42
# At most this many documents of each kind (non-relevant, relevant) are audited, chosen by the seed: four
# requests per non-relevant document and two per relevant one, so at most 600 requests an audit.
DOCUMENTS_PER_KIND = 100


@dataclass(frozen=True)
class PeopleGrade:
    pool_document: PoolDocument
    grade: int
    source: str  # "reference vN" or "assessors"


def relevant_from(grades: GradeMap) -> int:
    """The study's lowest relevant grade: the one the model's 2 maps to (relevant from 2, as UMBRELA's and
    TREC's binarisation), so the people's and the model's grades are cut at the same place."""
    return grades.mapping[2]


def people_grades(study: Study) -> list[PeopleGrade]:
    """The people's grade of each pool document of the study's scored scenarios: the latest reference
    version's (unless a machine assessor of the study gave it), else the lower median of the human
    assessors' grades; documents neither graded are left out. Ordered by scenario, then pool document."""
    version = study.reference_versions.order_by("-number").first()
    reference: dict[tuple[str, int], int] = {}
    source = f"reference v{version.number}" if version is not None else ""
    if version is not None:
        machines = study.assessors.exclude(ASSESSORS_WHO_ARE_PEOPLE).values("user_id")
        for topic, document_id, grade in version.judgments.exclude(judged_by_id__in=machines).values_list(
            "topic_id", "document_id", "grade"
        ):
            reference[(topic, document_id)] = grade
    found = []
    for row in document_grades(study):
        pool_document = row.pool_document
        if pool_document.pool.scenario.practice:
            continue
        key = (pool_document.pool.scenario.topic_id, pool_document.document_id)
        if key in reference:
            found.append(PeopleGrade(pool_document, reference[key], source))
        elif row.grades:
            values = sorted(grade for _member, grade in row.grades)
            found.append(PeopleGrade(pool_document, values[(len(values) - 1) // 2], "assessors"))
    return found


def llm_audit_start(*, assessor: LLMAssessor, created_by, seed: int = DEFAULT_SEED) -> LLMAudit:
    """Queue an audit of the assessor under `seed`. Refused while one is queued or running, when the study's
    scale has no map, and when no pool document has a grade of the people's to hold the model against."""
    study = assessor.membership.study
    grade_map_for(study.grade_values())
    if not 0 <= seed < 2**31:
        raise AssessmentError("seed: a whole number from 0 to 2147483647")
    with transaction.atomic():
        LLMAssessor.objects.select_for_update().get(pk=assessor.pk)
        if assessor.audits.filter(status__in=ACTIVE).exists():
            raise AssessmentError("this assessor has an audit queued or running; wait for its end")
        if not people_grades(study):
            raise AssessmentError(
                "no pool document has a grade of the people's (a reference version or assessors' grades) "
                "to hold the model against"
            )
        audit = LLMAudit.objects.create(
            assessor=assessor,
            seed=seed,
            created_by=created_by,
            prompt_hash=prompt_hash(assessor.prompt_template, assessor.model_name),
        )
        AuditEntry.objects.create(
            study=study,
            action=AuditAction.LLM_AUDIT_STARTED,
            detail={
                "assessor": assessor.membership.user.get_username(),
                "audit": audit.pk,
                "seed": seed,
                "by": getattr(created_by, "username", ""),
            },
        )
        delay_on_commit(
            task_named("studies.tasks.llm_audit_task"), audit.pk, on_failure=lambda exc: _unqueued(audit.pk)
        )
    return audit


def _unqueued(audit_id: int) -> None:
    LLMAudit.objects.filter(pk=audit_id, status=Status.QUEUED).update(
        status=Status.FAILED,
        error="the task could not be queued (broker unreachable)",
        finished_at=timezone.now(),
    )


def _chosen(grades: list[PeopleGrade], seed: int) -> list[PeopleGrade]:
    if len(grades) <= DOCUMENTS_PER_KIND:
        return grades
    picked = random.Random(f"{seed}:documents").sample(range(len(grades)), DOCUMENTS_PER_KIND)
    return [grades[i] for i in sorted(picked)]


def audit_items_build(audit: LLMAudit) -> int:
    """The audit's items (once: an audit that has items keeps them, so a task delivered twice sends each at
    most once): each chosen non-relevant document as it is and in each NON_RELEVANT_VARIANTS, each chosen
    relevant one as it is and in each RELEVANT_VARIANTS. Returns how many items the audit has."""
    if audit.items.exists():
        return audit.items.count()
    assessor = audit.assessor
    cut = relevant_from(grade_map_for(assessor.membership.study.grade_values()))
    grades = people_grades(assessor.membership.study)
    non_relevant = _chosen([g for g in grades if g.grade < cut], audit.seed)
    relevant = _chosen([g for g in grades if g.grade >= cut], audit.seed)
    items = []
    for people, variants in ((non_relevant, NON_RELEVANT_VARIANTS), (relevant, RELEVANT_VARIANTS)):
        for found in people:
            scenario, document = found.pool_document.pool.scenario, found.pool_document.document
            key = f"{scenario.code}/{document.external_id}"
            for variant in (ORIGINAL, *variants):
                text = variant_text(variant, document.text, query=scenario.title, seed=audit.seed, key=key)
                items.append(
                    LLMAuditItem(
                        audit=audit,
                        pool_document=found.pool_document,
                        scenario_code=scenario.code,
                        document_external_id=document.external_id,
                        variant=variant,
                        people_grade=found.grade,
                        people_relevant=found.grade >= cut,
                        passage=document_prompt(assessor, scenario, document.title, text),
                    )
                )
    LLMAuditItem.objects.bulk_create(items)
    LLMAudit.objects.filter(pk=audit.pk).update(total=len(items))
    return len(items)


def llm_audit_execute(*, audit_id: int) -> LLMAudit | None:
    """The audit's work (the task's body). Idempotent: an audit that is not queued is left alone (None);
    an item already answered is not sent again."""
    started = LLMAudit.objects.filter(pk=audit_id, status=Status.QUEUED).update(
        status=Status.RUNNING, started_at=timezone.now()
    )
    if not started:
        return None
    audit = LLMAudit.objects.select_related("assessor__membership__study", "assessor__membership__user").get(
        pk=audit_id
    )
    try:
        audit_items_build(audit)
        final = _send_all(audit)
    except AssessmentError as error:
        final, audit.error = Status.FAILED, str(error)[:300]
    except SoftTimeLimitExceeded:
        final = Status.FAILED
        audit.error = f"stopped at the time limit ({settings.LLM_RUN_SOFT_TIME_LIMIT_SECONDS} s)"
    except Exception as error:
        _finish(audit, Status.FAILED, f"stopped by an error: {type(error).__name__}")
        raise
    figures = audit_figures(audit_observations(audit), seed=audit.seed) if final == Status.DONE else {}
    _finish(audit, final, audit.error, figures)
    audit.refresh_from_db()
    return audit


def audit_observations(audit: LLMAudit) -> list[Observation]:
    return [
        Observation(
            scenario=scenario,
            key=f"{scenario}/{external_id}",
            variant=variant,
            people_relevant=people_relevant,
            judged_relevant=judged_relevant,
        )
        for scenario, external_id, variant, people_relevant, judged_relevant in audit.items.values_list(
            "scenario_code", "document_external_id", "variant", "people_relevant", "judged_relevant"
        )
    ]


def _finish(audit: LLMAudit, status: str, error: str, figures: dict | None = None) -> None:
    LLMAudit.objects.filter(pk=audit.pk, status=Status.RUNNING).update(
        status=status,
        error=error[:300],
        finished_at=timezone.now(),
        figures=figures or {},
        verdict=(figures or {}).get("verdict", ""),
    )


@sensitive_variables("api_key")
def _send_all(audit: LLMAudit) -> str:
    assessor = audit.assessor
    grades = grade_map_for(assessor.membership.study.grade_values())
    cut = relevant_from(grades)
    api_key = api_key_decrypt(assessor.api_key_encrypted)
    budget, pace = Budget(assessor, audit), Pace(assessor.requests_per_minute)
    scope = f"study:{assessor.membership.study_id}"  # the breaker is this lab's, as a run's is
    for item in audit.items.filter(status="").order_by("id"):
        messages = [{"role": "user", "content": item.passage}]
        body = request_body(assessor, messages)
        cost, tokens_in, tokens_out = Decimal(0), 0, 0
        for attempt in range(1, assessor.max_retries + 2):
            if budget.would_cross(len(item.passage)):
                audit.error = "the next request could cross the cost cap"
                return Status.COST_CAP
            pace.wait()
            outcome = chat_complete(
                endpoint_url=assessor.endpoint_url,
                api_key=api_key,
                body=body,
                timeout=assessor.timeout_seconds,
                scope=scope,
            )
            last = outcome.status == LLMRequest.Status.OK or not outcome.retryable
            last = last or attempt == assessor.max_retries + 1
            wait = retry_wait(outcome, attempt, last)
            cost += budget.spend(outcome)
            tokens_in, tokens_out = tokens_in + outcome.tokens_in, tokens_out + outcome.tokens_out
            if last:
                break
            time.sleep(wait)
        ok = outcome.status == LLMRequest.Status.OK and outcome.model_grade is not None
        grade = grades.mapping[outcome.model_grade] if ok and outcome.model_grade is not None else None
        with transaction.atomic():
            LLMAuditItem.objects.filter(pk=item.pk).update(
                attempts=attempt,
                status=outcome.status,
                http_status=outcome.http_status,
                raw_answer=outcome.raw_answer,
                model_grade=outcome.model_grade,
                grade=grade,
                judged_relevant=None if grade is None else grade >= cut,
                error=outcome.error[:300],
            )
            LLMAudit.objects.filter(pk=audit.pk).update(
                done=F("done") + int(ok),
                failed=F("failed") + int(not ok),
                tokens_in=F("tokens_in") + tokens_in,
                tokens_out=F("tokens_out") + tokens_out,
                cost=F("cost") + cost,
            )
        if outcome.status == LLMRequest.Status.REFUSED:
            audit.error = f"the endpoint is refused: {outcome.error}"
            return Status.FAILED
    return Status.DONE
