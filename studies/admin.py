from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model

from studies import models
from studies.design import services
from studies.design.selectors import collection_usable_by, collections_visible_to
from studies.errors import DesignError, SystemConfigError
from studies.kernel.event_log import events_readable
from studies.questionnaires.items import questionnaire_errors


class StudyAdminForm(forms.ModelForm):
    """The questionnaires are checked item by item, as the API checks them
    (studies/questionnaires/items.py)."""

    def _questionnaire(self, field):
        value = self.cleaned_data.get(field)
        if value is None:  # left blank: no questions (the model's default)
            value = []
        errors = questionnaire_errors(value)
        if errors:
            raise forms.ValidationError(errors)
        # THE rule on answered items (services.questionnaire_check_answered), as the pages and the API ask it.
        if self.instance.pk is not None and field in self.changed_data:
            try:
                services.questionnaire_check_answered(study=self.instance, which=field, items=value)
            except DesignError as error:
                raise forms.ValidationError(str(error)) from None
        return value

    def clean_questionnaire(self):
        return self._questionnaire("questionnaire")

    def clean_pre_task_questionnaire(self):
        return self._questionnaire("pre_task_questionnaire")

    def clean_post_task_questionnaire(self):
        return self._questionnaire("post_task_questionnaire")

    def clean(self):
        cleaned = super().clean()
        collection, owner = cleaned.get("collection"), cleaned.get("owner")
        # The rule every path applies (services.collection_check_usable): the study's owner may use its
        # collection. A collection kept unchanged is not asked again (it may predate the rule).
        changed = {"collection", "owner"} & set(self.changed_data)
        if collection is not None and owner is not None and changed:
            if not collection_usable_by(user=owner, collection=collection):
                self.add_error(
                    "collection", f"{owner.username} may not use this collection: share it with them first"
                )
        # The design (within or between subjects) is fixed at the first enrolment, by THE design-lock rule.
        if "design" in self.changed_data and self.instance.pk is not None:
            try:
                services.design_check_unlocked(study=self.instance)
            except services.DesignLockedError as error:
                self.add_error("design", str(error))
        return cleaned


class GradeLevelInline(admin.TabularInline):
    model = models.GradeLevel

    def get_extra(self, request, obj=None, **kwargs):
        # A new study starts with the default scale filled in (0..3: not .. highly relevant).
        return len(models.DEFAULT_GRADE_LABELS) if obj is None else 0


class DesignFormSet(forms.BaseInlineFormSet):
    """A study's scenarios or systems: adding, changing or removing one asks THE design-lock rule
    (services.design_check_unlocked), as the pages, the API and the importers do."""

    def clean(self):
        # Before super().clean(): its unique checks raise the PROTECT error of a removed row that assignments
        # use, which would hide the rule's own reason.
        if self.instance.pk is not None:  # a study being created has no participants
            self._check_design_unlocked()
        super().clean()

    def _check_design_unlocked(self):
        removing = [
            f for f in self.forms if self.can_delete and self._should_delete_form(f) and f.instance.pk
        ]
        edited = [f for f in self.forms if f.has_changed() and f not in removing]  # new rows and changed ones
        if edited or removing:
            try:
                services.design_check_unlocked(study=self.instance)
            except services.DesignLockedError as error:
                raise forms.ValidationError(str(error)) from None


class ScenarioInline(admin.StackedInline):
    model = models.Scenario
    formset = DesignFormSet
    extra = 0


class SystemAdminForm(forms.ModelForm):
    """A system's config is checked when it is saved by the design services' one rule
    (services.system_check_config, as for the pages, the API and the importers), not when a participant
    first searches; the refusal goes next to the field it names."""

    def clean(self):
        cleaned = super().clean()
        if "backend" in cleaned and "config" in cleaned:
            try:
                services.system_check_config(
                    code=cleaned.get("code") or "?", backend=cleaned["backend"], config=cleaned["config"]
                )
            except SystemConfigError as error:
                self.add_error(error.field, str(error))
        return cleaned


class SystemInline(admin.TabularInline):
    model = models.System
    form = SystemAdminForm
    formset = DesignFormSet
    extra = 0
    exclude = ["api_key_encrypted"]  # a generative system's key: set on the set-up page or by the API only


@admin.register(models.Study)
class StudyAdmin(admin.ModelAdmin):
    form = StudyAdminForm
    list_display = ["name", "slug", "owner", "created_at", "design_locked_at"]
    prepopulated_fields = {"slug": ["name"]}
    filter_horizontal = ["researchers"]
    inlines = [GradeLevelInline, ScenarioInline, SystemInline]
    readonly_fields = ["design_locked_at"]

    def get_changeform_initial_data(self, request):
        return {"owner": request.user.pk, **super().get_changeform_initial_data(request)}

    def get_formset_kwargs(self, request, obj, inline, prefix):
        kwargs = super().get_formset_kwargs(request, obj, inline, prefix)
        if isinstance(inline, GradeLevelInline) and obj.pk is None and request.method == "GET":
            kwargs["initial"] = [
                {"value": v, "label": label} for v, label in enumerate(models.DEFAULT_GRADE_LABELS)
            ]
        return kwargs

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "collection":
            kwargs["queryset"] = collections_visible_to(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        form.instance.researchers.add(form.instance.owner)  # the owner always sees their study


class AssignmentInline(admin.TabularInline):
    model = models.Assignment
    fk_name = "participant"
    extra = 0
    fields = ["position", "scenario", "system", "retake_of", "retake_reason"]


@admin.register(models.Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = ["code", "study", "enrolment_index", "state", "consented_at", "withdrawn_at"]
    list_filter = ["study", "state"]
    search_fields = ["code"]
    # The state, the plan row and the panel's ids change only through studies/participation/recruitment/.
    readonly_fields = [
        "access_token",
        "state",
        "state_changed_at",
        "state_reason",
        "started_at",
        "plan_row",
        "reissue_of",
        "panel_id",
        "panel_study_id",
        "panel_session_id",
        "panel_status",
        "panel_status_at",
    ]
    inlines = [AssignmentInline]


# Build a collection's search indexes from the admin, as Celery tasks queued once the request
# commits.
@admin.action(description="Build search indexes (every configuration)")
def collection_indexes_build(modeladmin, request, queryset):
    from django.db import transaction

    from studies.search.engines.search import CONFIGURATIONS
    from studies.tasks import collection_index_build_task

    for collection in queryset:
        for configuration in CONFIGURATIONS:
            transaction.on_commit(
                lambda pk=collection.pk, name=configuration: collection_index_build_task.delay(pk, name)
            )
    modeladmin.message_user(request, f"Index builds queued for {queryset.count()} collection(s).")


@admin.register(models.Collection)
class CollectionAdmin(admin.ModelAdmin):
    actions = [collection_indexes_build]
    list_display = ["name", "owner", "created_at"]
    list_filter = ["owner"]
    filter_horizontal = ["shared_with"]

    def get_queryset(self, request):
        return collections_visible_to(request.user)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "owner":
            kwargs["queryset"] = get_user_model().objects.filter(is_staff=True)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "shared_with":
            kwargs["queryset"] = get_user_model().objects.filter(is_staff=True, is_active=True)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def save_related(self, request, form, formsets, change):
        # Sharing goes through the services (their rules: who shares, who receives), not the form's m2m save.
        wanted = set(form.cleaned_data.pop("shared_with", None) or [])
        super().save_related(request, form, formsets, change)
        collection = form.instance
        current = set(collection.shared_with.all())
        try:
            for user in wanted - current:
                services.collection_share(collection=collection, user=user, by=request.user)
            for user in current - wanted:
                services.collection_unshare(collection=collection, user=user, by=request.user)
        except services.CollectionAccessError as error:
            messages.error(request, str(error))


@admin.register(models.Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["external_id", "collection", "title"]
    list_filter = ["collection"]
    search_fields = ["external_id", "title"]


class QueryInline(admin.TabularInline):
    model = models.Query
    extra = 0


@admin.register(models.SearchSession)
class SearchSessionAdmin(admin.ModelAdmin):
    list_display = ["assignment", "started_at", "ended_at", "end_reason"]
    list_select_related = ["assignment__participant", "assignment__scenario", "assignment__system"]
    inlines = [QueryInline]


@admin.register(models.Event)
class EventAdmin(admin.ModelAdmin):
    list_display = ["participant", "type", "client_event_id", "sequence", "server_time"]
    list_filter = ["type"]
    # The client time as events_readable reads it: a row stored before the client-time rule may hold one
    # Python cannot (1 BC in UTC, on PostgreSQL), which failed every page that loaded it.
    exclude = ["client_time"]
    readonly_fields = ["client_time_readable"]

    def get_queryset(self, request):
        return events_readable(super().get_queryset(request))

    @admin.display(description="client time")
    def client_time_readable(self, obj):
        return obj.readable_client_time

    def has_change_permission(self, request, obj=None):
        return False  # the log is append-only


class ReadOnlyReference(admin.ModelAdmin):
    """Versions are made only by studies.assessment.references.reference_version_create (which re-scores the
    study once they are committed) and never edited: a change is a new version."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(models.ReferenceVersion)
class ReferenceVersionAdmin(ReadOnlyReference):
    list_display = ["study", "number", "note", "created_by", "created_at"]
    list_filter = ["study"]


@admin.register(models.ReferenceJudgment)
class ReferenceJudgmentAdmin(ReadOnlyReference):
    list_display = ["version", "topic_id", "document", "grade", "judged_by", "source"]
    list_filter = ["version__study"]
    raw_id_fields = ["document"]


@admin.register(models.AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    list_display = ["study", "participant_code", "action", "at"]
    list_filter = ["study", "action"]


from studies.assessment import admin as assessment_admin  # noqa: E402,F401
