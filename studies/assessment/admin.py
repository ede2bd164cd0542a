"""Admin for the assessment tables (studies/models/assessment.py), registered from studies/admin.py."""

from django.contrib import admin

from studies import models


class PoolDocumentInline(admin.TabularInline):
    model = models.PoolDocument
    extra = 0
    raw_id_fields = ["document"]
    fields = ["document", "source", "source_detail", "added_at"]
    readonly_fields = ["added_at"]


@admin.register(models.AssessmentPool)
class AssessmentPoolAdmin(admin.ModelAdmin):
    list_display = ["scenario", "rule", "top_x", "built_at"]
    list_filter = ["scenario__study", "rule"]
    inlines = [PoolDocumentInline]


@admin.register(models.AssessmentPlan)
class AssessmentPlanAdmin(admin.ModelAdmin):
    list_display = ["study", "assessors_per_document"]


@admin.register(models.StudyAssessor)
class StudyAssessorAdmin(admin.ModelAdmin):
    list_display = ["user", "study", "invited_by", "invited_at"]
    list_filter = ["study"]
    raw_id_fields = ["user", "invited_by"]

    def has_add_permission(self, request):
        # Assessors join through studies.assessment.assessors.assessor_add (the study's assessment page): an
        # assessor of another lab must accept first, which a row added here would skip.
        return False


@admin.register(models.AssessorInvitation)
class AssessorInvitationAdmin(admin.ModelAdmin):
    """Invitations are answered by the assessor alone; the admin shows them."""

    list_display = ["user", "study", "status", "invited_by", "invited_at", "answered_at"]
    list_filter = ["status", "study"]
    readonly_fields = ["study", "user", "invited_by", "invited_at", "status", "answered_at"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(models.AssessorJudgment)
class AssessorJudgmentAdmin(admin.ModelAdmin):
    list_display = ["pool_document", "assessor", "grade", "updated_at"]
    list_filter = ["pool_document__pool__scenario__study"]
    raw_id_fields = ["pool_document", "assessor"]


@admin.register(models.AdjudicationDecision)
class AdjudicationDecisionAdmin(admin.ModelAdmin):
    list_display = ["pool_document", "grade", "method", "preset", "judged_by", "decided_at"]
    list_filter = ["pool_document__pool__scenario__study", "method"]
    raw_id_fields = ["pool_document", "judged_by", "decided_by"]
