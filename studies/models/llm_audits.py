"""Robustness audits of a language-model assessor: seeded variants of pool documents whose
relevance the people settled, sent through the assessor's own grading path, and the figures against the
people (docs/assessing.md, "Robustness audit"). The services are studies/assessment/llm_audit/: they alone
write these rows."""

from django.conf import settings
from django.db import models

from studies.models.llm_assessors import LLMAssessor, LLMRequest


class LLMAudit(models.Model):
    """One audit of an LLM assessor: its seed, its progress, and when done its figures and verdict."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        COST_CAP = "cost_cap", "Stopped: cost cap"
        FAILED = "failed", "Failed"

    FINISHED = (Status.DONE, Status.COST_CAP, Status.FAILED)

    assessor = models.ForeignKey(LLMAssessor, on_delete=models.CASCADE, related_name="audits")
    seed = models.PositiveIntegerField()
    prompt_hash = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    error = models.CharField(max_length=300, blank=True)
    # scoring.lib.judge_audit.audit_figures' answer, and its verdict ("robust", "not robust",
    # "undetermined") kept beside it for the pages and the provenance.
    figures = models.JSONField(default=dict, blank=True)
    verdict = models.CharField(max_length=20, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"audit {self.pk} of {self.assessor} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in self.FINISHED


class LLMAuditItem(models.Model):
    """One document in one form (the original or a variant), what the judge answered, and the people's
    relevance it is held against."""

    audit = models.ForeignKey(LLMAudit, on_delete=models.CASCADE, related_name="items")
    pool_document = models.ForeignKey(
        "studies.PoolDocument", null=True, on_delete=models.SET_NULL, related_name="+"
    )
    scenario_code = models.CharField(max_length=50)
    document_external_id = models.CharField(max_length=200)
    variant = models.CharField(max_length=20)
    people_grade = models.SmallIntegerField()
    people_relevant = models.BooleanField()
    passage = models.TextField(
        help_text="The prompt sent: the assessor's template with this form of the passage."
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    status = models.CharField(max_length=20, choices=LLMRequest.Status.choices, blank=True)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    raw_answer = models.TextField(blank=True)
    model_grade = models.SmallIntegerField(null=True, blank=True)
    grade = models.SmallIntegerField(null=True, blank=True)
    judged_relevant = models.BooleanField(null=True, blank=True)
    error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["audit", "scenario_code", "document_external_id", "variant"],
                name="llm_audit_item_once",
            )
        ]

    def __str__(self):
        return f"{self.document_external_id} ({self.variant}): {self.status or 'not sent'}"
