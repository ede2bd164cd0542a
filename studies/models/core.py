"""The data of an interactive search study (Järvelin et al., ECIR 2008, section 3.1).

Rules that must hold whatever writes the rows (a form, the admin, the API, a shell) are constraints in the
database: unique and check constraints here, and triggers (migration 0002) for the rules that look at
another table (grades inside the study's scale, contiguous query positions, the append-only event log).
Writes that touch several models live in `studies/design/services.py`. Import the models from
`studies.models`.
"""

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q

DEFAULT_GRADE_LABELS = ("not relevant", "marginally relevant", "fairly relevant", "highly relevant")


def new_access_token() -> str:
    # 32 bytes = 256 bits of entropy, URL-safe: the participant's private link.
    return secrets.token_urlsafe(32)


def access_token_digest(token: str) -> str:
    """SHA-256 of a participant token (hex): the indexed column tokens are looked up by (docs/security.md).

    The database compares digests, not tokens, so the time a lookup takes tells a caller nothing about how
    much of a guessed token was right."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class Collection(models.Model):
    """A document collection. Its owner and the researchers it is shared with may build studies on it;
    superusers may use every collection; no owner means "admin only" (docs/collections-and-systems.md)."""

    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="owned_collections",
    )
    # Shared explicitly, one researcher at a time, through studies.design.services.collection_share.
    shared_with = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="shared_collections"
    )

    def __str__(self):
        return self.name


class Document(models.Model):
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="documents")
    external_id = models.CharField(max_length=200)
    title = models.TextField(blank=True)
    text = models.TextField(blank=True)
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["collection", "external_id"], name="document_external_id_unique"),
        ]

    def __str__(self):
        return self.external_id


STUDY_STATUSES = [
    ("draft", "Draft"),
    ("open", "Open"),
    ("paused", "Paused"),
    ("closed", "Closed"),
]

# How participants meet the systems (studies/design/latin_square.py, docs/latin-square.md): within-subject,
# every participant uses every system (in blocks), or between-subjects, one system (an arm) each.
STUDY_DESIGNS = [
    ("within", "Within-subject: each participant uses every system"),
    ("between", "Between-subjects: each participant uses one system for all tasks"),
]


class Study(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    description = models.TextField(blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_studies"
    )
    researchers = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="studies")
    collection = models.ForeignKey(
        Collection, null=True, blank=True, on_delete=models.PROTECT, related_name="studies"
    )
    consent_text = models.TextField(blank=True)
    consent_version = models.CharField(max_length=40, default="1")
    # Pre-study and post-task questionnaires: lists of {"name", "label", "kind", ...} (see
    # docs/running-a-study.md).
    questionnaire = models.JSONField(default=list, blank=True)
    post_task_questionnaire = models.JSONField(default=list, blank=True)
    # Asked before each task (before its session starts); empty: none (no default, unlike the other two).
    pre_task_questionnaire = models.JSONField(default=list, blank=True)
    time_limit_minutes = models.PositiveIntegerField(null=True, blank=True)
    # What the search page records beyond actions (the consent text should say so): which results
    # were on screen and for how long, and when the participant was away (tab hidden, window blurred, idle).
    record_exposure = models.BooleanField(default=True, db_default=True)  # old nodes insert studies too
    record_attention = models.BooleanField(default=True, db_default=True)
    # Set at the first enrolment: from then on scenarios and systems are fixed, or the balance would break.
    design_locked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # The life cycle (studies/design/lifecycle.py, docs/study-life-cycle.md): a new study is a "draft"
    # (services.study_create); null (older nodes' rows) reads as "open". Nullable
    # without a default so SQLite adds the columns in place (the triggers of 0002 forbid a table rebuild).
    status = models.CharField(max_length=10, null=True, blank=True, choices=STUDY_STATUSES)  # noqa: DJ001
    status_changed_at = models.DateTimeField(null=True, blank=True)
    # The exclusion rule on agreement with the reference (studies/assessment/exclusion.py,
    # docs/recruitment.md, "Checks"): a participant whose agreement (the measure; null reads as
    # "kappa_linear") with the newest reference version is below the minimum, on at least the least number of
    # documents in common (null reads as 5), is marked excluded. A null minimum: the rule is off. Nullable
    # without defaults, as above.
    exclusion_min_agreement = models.FloatField(null=True, blank=True)
    exclusion_measure = models.CharField(max_length=20, null=True, blank=True)  # noqa: DJ001
    exclusion_min_documents = models.PositiveIntegerField(null=True, blank=True)
    # The design (STUDY_DESIGNS); null reads as "within". Fixed with the scenarios and systems at the first
    # enrolment (studies/design/services.py: design_check_unlocked). Nullable without a default, as above.
    design = models.CharField(max_length=10, null=True, blank=True, choices=STUDY_DESIGNS)  # noqa: DJ001
    # The analysis population every reader counts by default (studies/population.py, docs/dashboards.md,
    # "Populations"): "completers", "itt", or either with leave-outs ("itt:excluded,timed_out"). Null reads as
    # "itt:excluded". Nullable without a default, as above.
    analysis_population = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001

    class Meta:
        verbose_name_plural = "studies"
        ordering = ["-created_at"]

    def __str__(self):
        return self.name

    def grade_values(self) -> list[int]:
        return [level.value for level in self.grade_levels.all()]


class GradeLevel(models.Model):
    """One step of a study's relevance scale (default 0..3)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="grade_levels")
    value = models.SmallIntegerField()
    label = models.CharField(max_length=80)

    class Meta:
        ordering = ["value"]
        constraints = [
            models.UniqueConstraint(fields=["study", "value"], name="grade_level_value_unique"),
            models.CheckConstraint(condition=Q(value__gte=0) & Q(value__lte=9), name="grade_level_value_0_9"),
        ]

    def __str__(self):
        return f"{self.value}: {self.label}"


class Scenario(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="scenarios")
    code = models.CharField(max_length=40)
    title = models.CharField(max_length=200)
    text = models.TextField(help_text="The scenario a participant reads before searching.")
    topic_id = models.CharField(
        max_length=100, help_text="Links the scenario to its reference judgments (qrels topic)."
    )
    # A practice task: worked first, before the counterbalanced ones, logged like any task, never scored
    # (scoring leaves its sessions out; the exports mark them). docs/latin-square.md, "Practice tasks".
    practice = models.BooleanField(default=False, db_default=False)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "code"], name="scenario_code_unique"),
            models.UniqueConstraint(fields=["study", "topic_id"], name="scenario_topic_unique"),
        ]

    def __str__(self):
        return f"{self.code}: {self.title}"


class System(models.Model):
    class Backend(models.TextChoices):
        BUILTIN = "builtin", "Built-in search engine"
        HTTP = "http", "Researcher's system over HTTP"
        # The researcher's own front-end shows the results and logs them with each query event (data.results);
        # SessionLab's engine is never run for it (docs/api.md, "An external front-end").
        EXTERNAL = "external", "Researcher's own front-end (logs the results it showed)"
        # An answer with citations instead of a list (studies/search/generative.py): extractive
        # (offline), built-in RAG over a chat-completions endpoint, or the lab's RAG service over HTTP.
        GENERATIVE = "generative", "Generated answer with citations"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="systems")
    code = models.CharField(max_length=40)
    name = models.CharField(max_length=200)
    backend = models.CharField(max_length=20, choices=Backend.choices, default=Backend.BUILTIN)
    # builtin: {"configuration": "bm25_title_text"}; http: {"url_template": "...{query}...", "timeout": 5};
    # external: nothing needed; generative: docs/generative-systems.md.
    config = models.JSONField(default=dict, blank=True)
    # A generative system's API key, encrypted and bound to its endpoint (studies/search/generative_keys.py):
    # never in config, never read back by a page or the API.
    api_key_encrypted = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "code"], name="system_code_unique"),
            models.CheckConstraint(
                condition=Q(backend__in=["builtin", "http", "external", "generative"]),
                name="system_backend_known",
            ),
        ]

    def __str__(self):
        return f"{self.code}: {self.name}"


class ParticipantState(models.TextChoices):
    """A participant's state (the rules: studies/participation/recruitment/states.py). Null in the column
    reads as INVITED (enrolled, link never opened)."""

    INVITED = "invited", "Invited"
    STARTED = "started", "Started"
    ACTIVE = "active", "Active"
    COMPLETED = "completed", "Completed"
    RETURNED = "returned", "Returned"
    TIMED_OUT = "timed_out", "Timed out"
    SCREENED_OUT = "screened_out", "Screened out"
    WITHDRAWN = "withdrawn", "Withdrawn"


# The states a participant ends in; and those of them that free the plan row for the next arrival.
ENDED_STATES = frozenset(
    {
        ParticipantState.COMPLETED,
        ParticipantState.RETURNED,
        ParticipantState.TIMED_OUT,
        ParticipantState.SCREENED_OUT,
        ParticipantState.WITHDRAWN,
    }
)
FREEING_STATES = ENDED_STATES - {ParticipantState.COMPLETED}


class ParticipantQuerySet(models.QuerySet):
    def bulk_create(self, objs, *args, **kwargs):
        # bulk_create skips save(): fill the lookup digest here too, so no path leaves it empty.
        objs = list(objs)
        for participant in objs:
            participant.access_token_digest = access_token_digest(participant.access_token)
        return super().bulk_create(objs, *args, **kwargs)


class Participant(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participants")
    code = models.CharField(max_length=40, help_text="Pseudonymous code; the only identity exports carry.")
    # Kept in clear: researchers hand out the links. Looked up only through access_token_digest.
    access_token = models.CharField(max_length=64, unique=True, default=new_access_token, editable=False)
    # Null only in the schema: SQLite cannot add a NOT NULL column without rebuilding the table, which the
    # triggers of migration 0002 forbid. save() and bulk_create() always fill it.
    access_token_digest = models.CharField(max_length=64, null=True, db_index=True, editable=False)  # noqa: DJ001
    # 0-based order of enrolment: the row of the study's assignment plan this participant received.
    enrolment_index = models.PositiveIntegerField()
    questionnaire_answers = models.JSONField(default=dict, blank=True)
    consent_version = models.CharField(max_length=40, blank=True)
    consented_at = models.DateTimeField(null=True, blank=True)
    declined_at = models.DateTimeField(null=True, blank=True)
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Recruitment and attrition (docs/recruitment.md; the rules: studies/participation/recruitment/). Every
    # column is nullable without a default: SQLite adds those in place (the triggers of 0002 forbid a
    # rebuild). The state: null reads as "invited" (enrolled, link never opened).
    state = models.CharField(  # noqa: DJ001
        max_length=20, null=True, blank=True, choices=ParticipantState.choices
    )
    state_changed_at = models.DateTimeField(null=True, blank=True)
    state_reason = models.CharField(max_length=300, null=True, blank=True)  # noqa: DJ001
    started_at = models.DateTimeField(
        null=True, blank=True
    )  # the study clock: their first act (consent) or their public-link arrival, never a mere GET
    # The row of the assignment plan this participant works; null reads as enrolment_index (enrolled before
    # re-issuing existed). A re-issued row names the participant who freed it (once: the unique constraint).
    plan_row = models.PositiveIntegerField(null=True, blank=True)
    reissue_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_index=False
    )  # served by participant_row_reissued_once
    # The panel's identifiers, from the public link (Prolific PROLIFIC_PID/STUDY_ID/SESSION_ID, MTurk
    # workerId/hitId/assignmentId, generic pid), and the panel's last word on the submission.
    panel_id = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001
    panel_study_id = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001
    panel_session_id = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001
    panel_status = models.CharField(max_length=20, null=True, blank=True)  # noqa: DJ001
    panel_status_at = models.DateTimeField(null=True, blank=True)
    # Set on a researcher's try-out participant ("Try it as a participant", studies/design/lifecycle.py): its
    # rows are stored apart from the study's data, never counted in the balance, scores or exports.
    preview_at = models.DateTimeField(null=True, blank=True)
    # Marked by the study's exclusion rule on agreement with the reference (studies/assessment/exclusion.py):
    # the sessions stay as stored; the dashboards leave them out unless asked (excluded=include). The reason
    # names the measure, the figure, the minimum and the documents in common.
    excluded_at = models.DateTimeField(null=True, blank=True)
    excluded_reason = models.CharField(max_length=300, null=True, blank=True)  # noqa: DJ001
    excluded_agreement = models.FloatField(null=True, blank=True)
    # Excluded by a researcher (the replay page, audited), not by the rule, which neither clears nor sets it.
    excluded_manually = models.BooleanField(default=False, db_default=False)
    # Bytes of the event payloads the participant's clients had stored: the batch adds its rows' size in its
    # own writes, and refuses an event past EVENTS_BYTES_PER_PARTICIPANT (docs/security.md).
    event_bytes = models.BigIntegerField(default=0, db_default=0, editable=False)

    objects = ParticipantQuerySet.as_manager()

    class Meta:
        ordering = ["study", "enrolment_index"]
        constraints = [
            models.UniqueConstraint(fields=["study", "code"], name="participant_code_unique"),
            models.UniqueConstraint(fields=["study", "enrolment_index"], name="participant_index_unique"),
            # Conditional, so SQLite creates them as indexes (a plain unique constraint rebuilds the table).
            models.UniqueConstraint(
                fields=["study", "panel_id"],
                condition=Q(panel_id__isnull=False),
                name="participant_panel_id_unique",
            ),
            models.UniqueConstraint(
                fields=["reissue_of"],
                condition=Q(reissue_of__isnull=False),
                name="participant_row_reissued_once",
            ),
            models.CheckConstraint(
                condition=Q(consented_at__isnull=True) | ~Q(consent_version=""),
                name="participant_consent_has_version",
            ),
        ]
        indexes = [
            # The arrivals' sweep: a study's started or active participants, oldest clock first (bounded).
            models.Index(fields=["study", "state", "started_at"], name="participant_overdue"),
        ]

    def __str__(self):
        return self.code

    def save(self, *args, **kwargs):
        self.access_token_digest = access_token_digest(self.access_token)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "access_token" in update_fields:
            kwargs["update_fields"] = {*update_fields, "access_token_digest"}
        super().save(*args, **kwargs)


class Assignment(models.Model):
    """One (scenario, system) a participant works, at a position of their Latin square order."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="assignments")
    position = models.PositiveSmallIntegerField()
    scenario = models.ForeignKey(Scenario, on_delete=models.RESTRICT, related_name="assignments")
    system = models.ForeignKey(System, on_delete=models.RESTRICT, related_name="assignments")
    # A participant works each scenario once; a retake points at the assignment it repeats and says why.
    retake_of = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.RESTRICT, related_name="retake"
    )
    retake_reason = models.TextField(blank=True)
    # The answers to the study's pre-task questionnaire, given before this assignment's session started.
    pre_task_answers = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["participant", "position"]
        constraints = [
            models.UniqueConstraint(fields=["participant", "position"], name="assignment_position_unique"),
            models.UniqueConstraint(
                fields=["participant", "scenario"],
                condition=Q(retake_of__isnull=True),
                name="assignment_scenario_once",
            ),
            models.CheckConstraint(
                condition=Q(retake_of__isnull=True) | ~Q(retake_reason=""),
                name="assignment_retake_has_reason",
            ),
            models.CheckConstraint(condition=Q(position__gte=1), name="assignment_position_from_1"),
        ]

    def __str__(self):
        return f"{self.participant} #{self.position}: {self.scenario.code} on {self.system.code}"


class SearchSession(models.Model):
    class EndReason(models.TextChoices):
        SATISFIED = "satisfied", "Found what they needed"
        GAVE_UP = "gave_up", "Gave up"
        TIMED_OUT = "timed_out", "Timed out"
        WITHDRAWN = "withdrawn", "Withdrawn"
        # The participant left on the panel (returned, timed out or rejected there): their open session is
        # ended by the server (studies/participation/recruitment/states.py: participant_sessions_end).
        LEFT = "left", "Left the study (panel)"

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="session")
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    end_reason = models.CharField(max_length=20, choices=EndReason.choices, blank=True)
    post_task_answers = models.JSONField(default=dict, blank=True)
    # The client's clock offset (server time = client time + offset), from the best round trip of the
    # session's event batches (docs/time-model.md): every time derived from the session's events is client
    # time + offset. clock_delay_ms is that round trip's delay; null when only one-way samples (the batch's
    # send time against its receive time) were seen. Both null: no estimate yet (the client's times are taken
    # as they are).
    clock_offset_ms = models.FloatField(null=True, blank=True)
    clock_delay_ms = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(Q(ended_at__isnull=True) & Q(end_reason=""))
                | (
                    Q(ended_at__isnull=False)
                    & Q(end_reason__in=["satisfied", "gave_up", "timed_out", "withdrawn", "left"])
                ),
                name="session_end_has_reason",
            ),
            models.CheckConstraint(
                condition=Q(ended_at__isnull=True) | Q(ended_at__gte=models.F("started_at")),
                name="session_ends_after_start",
            ),
        ]

    def __str__(self):
        return f"session of {self.assignment}"


class Query(models.Model):
    session = models.ForeignKey(
        SearchSession, on_delete=models.CASCADE, related_name="queries", db_index=False
    )  # served by the unique (session, position)
    position = models.PositiveSmallIntegerField()
    text = models.TextField()
    issued_at = models.DateTimeField()
    # "I stopped scanning here": the deepest rank the participant marked, for scan=observed scoring.
    scan_mark_rank = models.PositiveIntegerField(null=True, blank=True)
    # A plain message shown instead of (or beside) results: a system error, a query syntax fallback.
    system_message = models.TextField(blank=True)
    # How long the query took to write, from the task or the last results page shown: to the first
    # keystroke in the search box, and to the submission; none when the page did not report it.
    first_key_ms = models.PositiveIntegerField(null=True, blank=True)
    formulation_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["session", "position"]
        verbose_name_plural = "queries"
        constraints = [
            models.UniqueConstraint(fields=["session", "position"], name="query_position_unique"),
            models.CheckConstraint(condition=Q(position__gte=1), name="query_position_from_1"),
        ]

    def __str__(self):
        return f"Q{self.position}: {self.text}"


class ShownResult(models.Model):
    # Served by the unique (query, rank), as below: one index less to write for each result shown.
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="shown_results", db_index=False)
    rank = models.PositiveIntegerField()
    document = models.ForeignKey(
        Document, on_delete=models.PROTECT, related_name="+", db_index=False
    )  # see Meta
    title = models.TextField(blank=True)
    snippet = models.TextField(blank=True)
    page = models.PositiveSmallIntegerField(default=1)
    shown_at = models.DateTimeField()

    class Meta:
        ordering = ["query", "rank"]
        indexes = [
            # "Was this document shown in this session?" (every judgment and open) reads the index alone, not
            # each row of the document's results in every session (studies/participation/events/ingest.py).
            models.Index(fields=["document", "query"], name="shown_result_document_query"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["query", "rank"], name="shown_result_rank_unique"),
            models.CheckConstraint(condition=Q(rank__gte=1), name="shown_result_rank_from_1"),
            models.CheckConstraint(condition=Q(page__gte=1), name="shown_result_page_from_1"),
        ]

    def __str__(self):
        return f"{self.query_id}#{self.rank}: {self.document_id}"


class EventOrigin(models.TextChoices):
    CLIENT = "client", "client"
    SERVER = "server", "server"


class Event(models.Model):
    """The append-only raw log: every participant action as the client reported it.

    A trigger refuses UPDATE; rows are only ever deleted by a participant's withdrawal.
    """

    # No index of its own: the unique (participant, client_event_id) serves lookups by participant, and every
    # index is one more write for each event logged (docs/performance-load.md).
    participant = models.ForeignKey(
        Participant, on_delete=models.CASCADE, related_name="events", db_index=False
    )
    session = models.ForeignKey(
        SearchSession, null=True, blank=True, on_delete=models.CASCADE, related_name="events"
    )
    type = models.CharField(max_length=40)
    client_event_id = models.CharField(max_length=64)
    sequence = models.PositiveIntegerField(null=True, blank=True)
    client_time = models.DateTimeField(null=True, blank=True)
    server_time = models.DateTimeField(auto_now_add=True)
    payload = models.JSONField(default=dict, blank=True)
    # Who wrote the row. Readers of the types only the server writes (event_checks.SERVER_EVENT_TYPES) read
    # only server rows: a client row of one (an old database's) is never taken for the server's. No index.
    origin = models.CharField(
        max_length=6, choices=EventOrigin.choices, default=EventOrigin.CLIENT, db_default=EventOrigin.CLIENT
    )

    class Meta:
        ordering = ["participant", "server_time", "id"]
        constraints = [
            models.UniqueConstraint(fields=["participant", "client_event_id"], name="event_client_id_once"),
        ]

    def __str__(self):
        return f"{self.type} {self.client_event_id}"


class Judgment(models.Model):
    """A participant's current grade for a document in a session; every change is kept in JudgmentChange."""

    session = models.ForeignKey(
        SearchSession, on_delete=models.CASCADE, related_name="judgments", db_index=False
    )  # served by the unique (session, document)
    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    grade = models.SmallIntegerField()
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "document"], name="judgment_once_per_document"),
        ]

    def __str__(self):
        return f"session {self.session_id}: {self.document_id} = {self.grade}"


class JudgmentChange(models.Model):
    judgment = models.ForeignKey(Judgment, on_delete=models.CASCADE, related_name="history")
    grade = models.SmallIntegerField()
    changed_at = models.DateTimeField()

    class Meta:
        ordering = ["judgment", "changed_at", "id"]

    def __str__(self):
        return f"{self.judgment_id} -> {self.grade} at {self.changed_at:%Y-%m-%d %H:%M:%S}"
