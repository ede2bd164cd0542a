"""Assessor work: which scenarios each assessor judges, and the guidelines assessors read on their
form. New tables (SQLite keeps the triggers of the tables it does not rebuild). Writes go through
studies/assessment/assessor_work.py; docs/assessing.md ("Assessors", "What an assessor sees")."""

from django.conf import settings
from django.db import models
from django.db.models import Q


class AssessorScenario(models.Model):
    """The assessor judges this scenario. An assessor with no row judges every scenario of the study, so a
    study that never chooses keeps today's allocation."""

    assessor = models.ForeignKey(
        "studies.StudyAssessor", on_delete=models.CASCADE, related_name="chosen_scenarios"
    )
    scenario = models.ForeignKey("studies.Scenario", on_delete=models.CASCADE, related_name="+")

    class Meta:
        ordering = ["assessor", "scenario"]
        constraints = [
            models.UniqueConstraint(fields=["assessor", "scenario"], name="assessor_scenario_once"),
        ]

    def __str__(self):
        return f"{self.assessor.user} judges {self.scenario.code}"


class AssessmentGuidelines(models.Model):
    """The assessors' guidelines: the study's (scenario empty) or one scenario's. Plain text, kept as the
    researcher wrote it; the form shows it escaped, the scenario's after the study's."""

    study = models.ForeignKey("studies.Study", on_delete=models.CASCADE, related_name="assessment_guidelines")
    scenario = models.ForeignKey(
        "studies.Scenario", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    text = models.TextField(blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["study", "scenario"]
        constraints = [
            models.UniqueConstraint(fields=["study", "scenario"], name="guidelines_once_per_scenario"),
            models.UniqueConstraint(
                fields=["study"], condition=Q(scenario__isnull=True), name="guidelines_once_per_study"
            ),
        ]

    def __str__(self):
        return f"guidelines of {self.scenario or self.study}"
