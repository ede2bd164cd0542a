"""Runs of an LLM assessor: each pool document it has not graded is sent to the model once (and again on a
transient failure, up to the assessor's retries), under its rate limit and cost cap, and every request is
kept. A grade is stored with its request in one transaction, so nothing is half-stored; the run holds no
transaction of its own (a worker commits as it goes, and the page shows the progress). The task
(studies.tasks.llm_run_task) takes the run's id and calls `llm_run_execute`."""

from __future__ import annotations

import datetime
import logging
import math
import time
from decimal import Decimal

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from sessionlab.queueing import delay_on_commit, task_named
from studies.assessment.llm.client import Outcome, chat_complete, chat_request_body
from studies.assessment.llm.keys import api_key_decrypt
from studies.assessment.llm.prompts import GradeMap, grade_map_for, passage_text, prompt_hash, prompt_render
from studies.assessment.selectors import pool_documents_assessed
from studies.errors import AssessmentError
from studies.models import (
    AssessorJudgment,
    AuditAction,
    AuditEntry,
    LLMAssessor,
    LLMAudit,
    LLMRequest,
    LLMRun,
    PoolDocument,
    Scenario,
)

logger = logging.getLogger(__name__)
Status = LLMRun.Status
ACTIVE = (Status.QUEUED, Status.RUNNING)
CHARS_PER_TOKEN = 4  # a prompt's tokens, estimated before it is sent (English text: about 4 characters each)


def llm_run_start(*, assessor: LLMAssessor, created_by, scenarios: list[Scenario] | None = None) -> LLMRun:
    """Queue a run over the documents of `scenarios` (every scenario when none) that the assessor has not
    graded. One run at a time per assessor: a second is refused while one is queued or running."""
    study = assessor.membership.study
    if any(scenario.study_id != study.pk for scenario in scenarios or []):
        raise AssessmentError("a scenario of another study")
    practice = [scenario.code for scenario in scenarios or [] if scenario.practice]
    if practice:
        raise AssessmentError(
            f"scenarios: {', '.join(practice)} is a practice task: never scored, so never sent to the model"
        )
    grade_map_for(study.grade_values())  # a scale changed since set-up is refused now, not at the first grade
    with transaction.atomic():
        LLMAssessor.objects.select_for_update().get(pk=assessor.pk)
        _lost_runs_failed(assessor)
        if assessor.runs.filter(status__in=ACTIVE).exists():
            raise AssessmentError("this assessor has a run queued or running; cancel it or wait for its end")
        run = LLMRun.objects.create(
            assessor=assessor,
            created_by=created_by,
            scenario_ids=sorted(scenario.pk for scenario in scenarios or []),
            total=_documents(assessor, sorted(s.pk for s in scenarios or [])).count(),
        )
        AuditEntry.objects.create(
            study=study,
            action=AuditAction.LLM_RUN_STARTED,
            detail={
                "assessor": assessor.membership.user.get_username(),
                "run": run.pk,
                "scenarios": sorted(scenario.code for scenario in scenarios or []),
                "by": getattr(created_by, "username", ""),
            },
        )
        delay_on_commit(
            task_named("studies.tasks.llm_run_task"), run.pk, on_failure=lambda exc: _unqueued(run.pk)
        )
    return run


def _lost_runs_failed(assessor: LLMAssessor) -> None:
    """Fail the assessor's queued or running runs that sent nothing for LLM_RUN_STALE_SECONDS: their worker
    died or their task was lost, and they would block every later run. What they graded stays graded, and
    the next run sends only the rest. A lost run's task, should it run after all, finds it no longer queued
    and does nothing."""
    now = timezone.now()
    limit = now - datetime.timedelta(seconds=settings.LLM_RUN_STALE_SECONDS)
    for run in assessor.runs.filter(status__in=ACTIVE).annotate(last_sent=Max("requests__sent_at")):
        last = run.last_sent or run.started_at or run.created_at
        if last < limit:
            LLMRun.objects.filter(pk=run.pk, status__in=ACTIVE).update(
                status=Status.FAILED,
                error=f"no request for {settings.LLM_RUN_STALE_SECONDS} s: its worker stopped; failed when "
                "the next run was started",
                finished_at=now,
            )


def _unqueued(run_id: int) -> None:
    LLMRun.objects.filter(pk=run_id, status=Status.QUEUED).update(
        status=Status.FAILED,
        error="the task could not be queued (broker unreachable)",
        finished_at=timezone.now(),
    )


@transaction.atomic
def llm_run_cancel(*, run: LLMRun, by=None) -> bool:
    """Stop a queued or running run before its next request (the one under way is kept), with an audit
    entry. False when it had already ended (and nothing is written)."""
    cancelled = LLMRun.objects.filter(pk=run.pk, status__in=ACTIVE).update(
        status=Status.CANCELLED, finished_at=timezone.now()
    )
    if cancelled:
        membership = run.assessor.membership
        AuditEntry.objects.create(
            study_id=membership.study_id,
            action=AuditAction.LLM_RUN_CANCELLED,
            detail={
                "assessor": membership.user.get_username(),
                "run": run.pk,
                "by": getattr(by, "username", ""),
            },
        )
    return bool(cancelled)


def _documents(assessor: LLMAssessor, scenario_ids: list[int]):
    # A practice task's documents are never sent: it is never scored.
    documents = pool_documents_assessed(study_id=assessor.membership.study_id).exclude(
        assessor_judgments__assessor_id=assessor.membership.user_id
    )
    if scenario_ids:
        documents = documents.filter(pool__scenario_id__in=scenario_ids)
    return documents.select_related("document", "pool__scenario").order_by("pool__scenario_id", "id")


class Budget:
    """What the run has spent, and whether the next request could cross the cap: its prompt's tokens are
    estimated (CHARS_PER_TOKEN) and its answer counted at the most it may be (max_answer_tokens)."""

    def __init__(self, assessor: LLMAssessor, run: LLMRun | LLMAudit):
        self.assessor = assessor
        self.cost = Decimal(run.cost)
        self.tokens = run.tokens_in + run.tokens_out

    def price(self, tokens_in: int, tokens_out: int) -> Decimal:
        price_in, price_out = self.assessor.price_input_per_million, self.assessor.price_output_per_million
        if price_in is None or price_out is None:
            return Decimal(0)
        return (Decimal(tokens_in) * price_in + Decimal(tokens_out) * price_out) / Decimal(1_000_000)

    def would_cross(self, prompt_chars: int) -> bool:
        tokens_in = math.ceil(prompt_chars / CHARS_PER_TOKEN)
        tokens_out = self.assessor.max_answer_tokens
        cap, token_cap = self.assessor.cost_cap, self.assessor.token_cap
        if cap is not None and self.assessor.priced and self.cost + self.price(tokens_in, tokens_out) > cap:
            return True
        return token_cap is not None and self.tokens + tokens_in + tokens_out > token_cap

    def spend(self, outcome: Outcome) -> Decimal:
        cost = self.price(outcome.tokens_in, outcome.tokens_out)
        self.cost += cost
        self.tokens += outcome.tokens_in + outcome.tokens_out
        return cost


class Pace:
    """At most requests_per_minute requests start in any minute: each waits for its turn."""

    def __init__(self, per_minute: int):
        self.interval = 60.0 / max(per_minute, 1)
        self.next_at = 0.0

    def wait(self) -> None:
        now = time.monotonic()
        if now < self.next_at:
            time.sleep(self.next_at - now)
        self.next_at = max(now, self.next_at) + self.interval


class LabAtCap(Exception):
    """The run's lab (its study's owner) has LLM_RUNS_PER_LAB runs running: the run stays queued."""


def llm_run_execute(*, run_id: int, eager: bool = False) -> LLMRun | None:
    """The run's work (the task's body). Idempotent: a run that is not queued is left alone (None), and
    documents graded meanwhile are skipped. LabAtCap when its lab has LLM_RUNS_PER_LAB runs running (the run
    stays queued, for the task to try again); in eager mode, where nothing would try again, the run fails
    saying so instead."""
    outcome = _start_within_the_lab_s_cap(run_id)
    if outcome == "not queued":
        return None
    if outcome == "at cap":
        if not eager:
            raise LabAtCap(run_id)
        LLMRun.objects.filter(pk=run_id, status=Status.QUEUED).update(
            status=Status.FAILED,
            error=f"this lab has {settings.LLM_RUNS_PER_LAB} language-model runs running (the cap, "
            "LLM_RUNS_PER_LAB); start it again when one has ended",
            finished_at=timezone.now(),
        )
        return LLMRun.objects.get(pk=run_id)
    run = LLMRun.objects.select_related("assessor__membership__study", "assessor__membership__user").get(
        pk=run_id
    )
    try:
        final = _work(run)
    except AssessmentError as error:
        final, run.error = Status.FAILED, str(error)[:300]
    except SoftTimeLimitExceeded:
        limit = settings.LLM_RUN_SOFT_TIME_LIMIT_SECONDS
        final = Status.FAILED
        run.error = f"stopped at the time limit ({limit} s, LLM_RUN_SOFT_TIME_LIMIT_SECONDS); what it graded "
        run.error += "stays, and starting it again sends the rest"
    except Exception as error:
        _finish(run, Status.FAILED, f"stopped by an error: {type(error).__name__}")
        raise
    _finish(run, final, run.error)
    run.refresh_from_db()
    return run


def _start_within_the_lab_s_cap(run_id: int) -> str:
    """Queued -> running, unless the run's lab (its study's owner) already runs LLM_RUNS_PER_LAB: "started",
    "at cap" (still queued), or "not queued" (cancelled, or taken by another delivery: nothing to do). The
    owner's row is locked, so two workers cannot both take the lab's last place."""
    owner_id = (
        LLMRun.objects.filter(pk=run_id, status=Status.QUEUED)
        .values_list("assessor__membership__study__owner_id", flat=True)
        .first()
    )
    if owner_id is None:
        return "not queued"
    with transaction.atomic():
        list(get_user_model().objects.select_for_update().filter(pk=owner_id).values_list("pk"))
        fresh = timezone.now() - datetime.timedelta(seconds=settings.LLM_RUN_STALE_SECONDS)
        running = LLMRun.objects.filter(
            status=Status.RUNNING,
            assessor__membership__study__owner_id=owner_id,
            started_at__gte=fresh,  # a lost run (its worker died) holds no place
        ).count()
        if running >= settings.LLM_RUNS_PER_LAB:
            return "at cap"
        started = LLMRun.objects.filter(pk=run_id, status=Status.QUEUED).update(
            status=Status.RUNNING, started_at=timezone.now()
        )
    return "started" if started else "not queued"


def _finish(run: LLMRun, status: str, error: str) -> None:
    # Conditional: a run cancelled meanwhile stays cancelled.
    LLMRun.objects.filter(pk=run.pk, status=Status.RUNNING).update(
        status=status, error=error[:300], finished_at=timezone.now()
    )


def document_prompt(assessor: LLMAssessor, scenario: Scenario, title: str, text: str) -> str:
    """THE prompt the assessor sends for a document of a scenario: its template, the scenario's title and
    text, the passage cut to its length and defanged (prompts.passage_text). Runs and audits both send it."""
    return prompt_render(
        assessor.prompt_template,
        query=scenario.title,
        passage=passage_text(title, text, assessor.passage_max_chars),
        description=scenario.text,
        narrative=scenario.text,
    )


def request_body(assessor: LLMAssessor, messages: list[dict]) -> dict:
    return chat_request_body(
        model=assessor.model_name,
        messages=messages,
        max_tokens=assessor.max_answer_tokens,
        temperature=assessor.temperature,
    )


@sensitive_variables("api_key")
def _work(run: LLMRun) -> str:
    assessor = run.assessor
    study = assessor.membership.study
    grades = grade_map_for(study.grade_values())
    api_key = api_key_decrypt(assessor.api_key_encrypted)
    hashed = prompt_hash(assessor.prompt_template, assessor.model_name)
    documents = list(_documents(assessor, run.scenario_ids))
    LLMRun.objects.filter(pk=run.pk).update(total=len(documents))
    budget, pace = Budget(assessor, run), Pace(assessor.requests_per_minute)
    for pool_document in documents:
        if LLMRun.objects.filter(pk=run.pk).values_list("status", flat=True).get() != Status.RUNNING:
            return Status.CANCELLED
        scenario, document = pool_document.pool.scenario, pool_document.document
        prompt = document_prompt(assessor, scenario, document.title, document.text)
        messages = [{"role": "user", "content": prompt}]
        body = request_body(assessor, messages)
        for attempt in range(1, assessor.max_retries + 2):
            if budget.would_cross(len(prompt)):
                run.error = "the next request could cross the cost cap"
                return Status.COST_CAP
            pace.wait()
            outcome = chat_complete(
                endpoint_url=assessor.endpoint_url,
                api_key=api_key,
                body=body,
                timeout=assessor.timeout_seconds,
                scope=f"study:{study.pk}",  # the breaker is this lab's, not the installation's
            )
            last_attempt = outcome.status == LLMRequest.Status.OK or not outcome.retryable
            last_attempt = last_attempt or attempt == assessor.max_retries + 1
            wait = retry_wait(outcome, attempt, last_attempt)
            _record(
                run=run,
                pool_document=pool_document,
                attempt=attempt,
                hashed=hashed,
                messages=messages,
                outcome=outcome,
                grades=grades,
                cost=budget.spend(outcome),
                counted=last_attempt,
            )
            if last_attempt:
                break
            time.sleep(wait)
        if outcome.status == LLMRequest.Status.REFUSED:
            run.error = f"the endpoint is refused: {outcome.error}"
            return Status.FAILED
    return Status.DONE


def retry_wait(outcome: Outcome, attempt: int, last_attempt: bool) -> float:
    """How long to wait before the next attempt: the server's Retry-After when it sent one (capped at
    LLM_RETRY_AFTER_MAX_SECONDS: a server asking for an hour would hold the worker), else the backoff
    (LLM_RETRY_BACKOFF_SECONDS, doubled each time). The Retry-After and the wait are added to the request's
    error text, so the page and the API show why the run paused."""
    backoff = float(settings.LLM_RETRY_BACKOFF_SECONDS * 2 ** (attempt - 1))
    if outcome.retry_after is None:
        return backoff
    cap = float(settings.LLM_RETRY_AFTER_MAX_SECONDS)
    wait = min(outcome.retry_after, cap)
    if last_attempt:
        said = "no attempt left"
    else:
        said = f"waited {wait:g} s" + (f" (capped at {cap:g} s)" if outcome.retry_after > cap else "")
    outcome.error = f"{outcome.error}; Retry-After {outcome.retry_after:g} s, {said}"[:300]
    return wait


def _record(
    *,
    run: LLMRun,
    pool_document: PoolDocument,
    attempt: int,
    hashed: str,
    messages: list[dict],
    outcome: Outcome,
    grades: GradeMap,
    cost: Decimal,
    counted: bool,
) -> None:
    """The request, its grade (if any) and the run's counters, in one transaction. `counted`: the document's
    last attempt, which counts it done or failed."""
    ok = outcome.status == LLMRequest.Status.OK
    grade = grades.mapping[outcome.model_grade] if ok and outcome.model_grade is not None else None
    now = timezone.now()
    with transaction.atomic():
        LLMRequest.objects.create(
            run=run,
            pool_document=pool_document,
            document_external_id=pool_document.document.external_id,
            attempt=attempt,
            model_name=run.assessor.model_name,
            prompt_hash=hashed,
            messages=messages,
            raw_answer=outcome.raw_answer,
            model_grade=outcome.model_grade,
            grade=grade,
            tokens_in=outcome.tokens_in,
            tokens_out=outcome.tokens_out,
            latency_ms=outcome.latency_ms,
            status=outcome.status,
            http_status=outcome.http_status,
            error=outcome.error[:300],
            sent_at=now,
        )
        if grade is not None:
            AssessorJudgment.objects.get_or_create(
                assessor_id=run.assessor.membership.user_id,
                pool_document=pool_document,
                defaults={"grade": grade, "created_at": now, "updated_at": now},
            )
        LLMRun.objects.filter(pk=run.pk).update(
            done=F("done") + int(counted and ok),
            failed=F("failed") + int(counted and not ok),
            tokens_in=F("tokens_in") + outcome.tokens_in,
            tokens_out=F("tokens_out") + outcome.tokens_out,
            cost=F("cost") + cost,
        )
