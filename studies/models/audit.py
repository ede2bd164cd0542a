"""The audit trail: what happened in a study, without the data it concerned (a withdrawal leaves this and
nothing else). Import the models from `studies.models`."""

from django.db import models

from studies.models.core import Study


class AuditAction(models.TextChoices):
    """What an AuditEntry records; each is written by one service (its module in the comment)."""

    STUDY_STATUS_CHANGED = "study_status_changed", "Study status changed"  # design/lifecycle.py
    STUDY_COPIED = "study_copied", "Study copied"  # design/copying.py
    PREVIEW_STARTED = "preview_started", "Preview started"
    PREVIEW_DELETED = "preview_deleted", "Preview deleted"
    CONSENT_CHANGED = "consent_changed", "Consent changed"  # design/setup_services.py
    RECRUITMENT_CHANGED = "recruitment_changed", "Recruitment changed"  # participation/recruitment/
    PARTICIPANT_JOINED = "participant_joined", "Participant joined"
    PARTICIPANT_STATE = "participant_state", "Participant state"
    PARTICIPANT_WITHDRAWN = "participant_withdrawn", "Participant withdrawn"  # participation/way/steps.py
    EXCLUSION_MARKED = "exclusion_marked", "Exclusion marked"  # assessment/exclusion.py
    EXCLUSION_CLEARED = "exclusion_cleared", "Exclusion cleared"
    EVENTS_ARCHIVED = "events_archived", "Events archived"  # interchange/event_archive.py
    EVENTS_RESTORED = "events_restored", "Events restored"
    GUIDELINES_CHANGED = "guidelines_changed", "Assessment guidelines changed"  # assessment/assessor_work.py
    ASSESSOR_SCENARIOS_CHANGED = "assessor_scenarios_changed", "Assessor's scenarios changed"
    LLM_ASSESSOR_CREATED = "llm_assessor_created", "LLM assessor set up"  # assessment/llm/setup.py
    LLM_ASSESSOR_CHANGED = "llm_assessor_changed", "LLM assessor's settings changed"
    LLM_RUN_STARTED = "llm_run_started", "LLM run started"  # assessment/llm/runs.py
    LLM_RUN_CANCELLED = "llm_run_cancelled", "LLM run cancelled"
    LLM_AUDIT_STARTED = "llm_audit_started", "LLM robustness audit started"  # assessment/llm_audit/
    REFERENCE_PUBLISHED_WITH_RULES = (  # assessment/references.py
        "reference_published_with_rules",
        "Reference published with machine rules",
    )


class AuditEntry(models.Model):
    """What happened, without the data it concerned (a withdrawal leaves this and nothing else)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="audit_entries")
    participant_code = models.CharField(max_length=40, blank=True)
    action = models.CharField(max_length=60, choices=AuditAction.choices)
    detail = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at"]

    def __str__(self):
        return f"{self.action} {self.participant_code}"
