"""Reads for the LLM assessor's pages."""

from __future__ import annotations

from django.db.models import Count
from django.shortcuts import get_object_or_404

from studies.models import LLMAssessor, LLMAudit, LLMAuditItem, LLMRequest, LLMRun, Study

REQUESTS_SHOWN = 1000


def llm_assessors_of(study: Study) -> list[LLMAssessor]:
    return list(
        LLMAssessor.objects.filter(membership__study=study).select_related("membership__user").order_by("id")
    )


def llm_assessor_of(study: Study, pk: int) -> LLMAssessor:
    """The study's LLM assessor `pk`, or a 404 (one of another study is as unknown as none)."""
    return get_object_or_404(
        LLMAssessor.objects.select_related("membership__user", "membership__study"),
        membership__study=study,
        pk=pk,
    )


def llm_run_of(study: Study, pk: int) -> LLMRun:
    return get_object_or_404(
        LLMRun.objects.select_related("assessor__membership__user"), assessor__membership__study=study, pk=pk
    )


def llm_run_requests(run: LLMRun, status: str = "") -> tuple[list[LLMRequest], dict[str, int]]:
    """The run's kept requests (the last REQUESTS_SHOWN, of one status if given) and the count per status."""
    counts = dict(run.requests.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    requests = run.requests.order_by("-id")
    if status:
        requests = requests.filter(status=status)
    return list(requests[:REQUESTS_SHOWN]), counts


AUDIT_ITEMS_SHOWN = 1000


def llm_audit_of(study: Study, pk: int) -> LLMAudit:
    return get_object_or_404(
        LLMAudit.objects.select_related("assessor__membership__user"),
        assessor__membership__study=study,
        pk=pk,
    )


def llm_audit_items(audit: LLMAudit) -> list[LLMAuditItem]:
    return list(audit.items.order_by("scenario_code", "document_external_id", "id")[:AUDIT_ITEMS_SHOWN])


def llm_audits_latest(study: Study) -> dict[int, LLMAudit]:
    """Each LLM assessor's latest finished audit, by assessor id (the pages show it beside agreement)."""
    latest: dict[int, LLMAudit] = {}
    done = LLMAudit.objects.filter(assessor__membership__study=study, status=LLMAudit.Status.DONE)
    for audit in done.select_related("assessor__membership__user").order_by("finished_at", "id"):
        latest[audit.assessor_id] = audit
    return latest
