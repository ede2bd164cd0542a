from django.contrib import admin

from .models import QueryScore, ScoringRun, SessionScore


@admin.register(ScoringRun)
class ScoringRunAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "study",
        "label",
        "status",
        "progress_done",
        "progress_total",
        "is_default",
        "stale",
        "created_at",
        "finished_at",
    )
    list_filter = ("status", "is_default", "stale", "formulation", "judgments")
    search_fields = ("label", "study__name", "study__slug")
    readonly_fields = (
        "current_pass",
        "progress_done",
        "progress_total",
        "generation",
        "started_at",
        "finished_at",
        "created_at",
        "error",
    )
    raw_id_fields = ("study", "reference_version", "created_by")


@admin.register(SessionScore)
class SessionScoreAdmin(admin.ModelAdmin):
    list_display = (
        "run",
        "session",
        "participant",
        "scenario",
        "system",
        "n_queries",
        "final",
        "normalized_final",
    )
    list_filter = ("run__study",)
    raw_id_fields = ("run", "session", "participant", "scenario", "system")
    exclude = ("curve", "ideal", "grid")


@admin.register(QueryScore)
class QueryScoreAdmin(admin.ModelAdmin):
    list_display = ("run", "session", "position", "is_last", "sdcg")
    raw_id_fields = ("run", "session", "query")
    exclude = ("by_rank",)
