"""Language-model assessors: a study's machine assessor, which grades its pools' documents through
an OpenAI-compatible chat-completions endpoint. It holds a StudyAssessor membership of an account that cannot
log in, so its grades are AssessorJudgment rows that agreement reads beside the people's; allocation and
adjudication leave it out (StudyAssessor.PEOPLE), and its grades enter a reference version only by an
explicit rule recorded in the version's provenance. See docs/assessing.md, "Language-model assessors".

The services are in studies/assessment/llm/: they alone write these rows."""

from django.conf import settings
from django.db import models


class LLMAssessor(models.Model):
    """A language model set up as an assessor of one study: where it is served, which model answers, the
    prompt it is sent, and the limits of its runs. The API key is stored encrypted (api_key_encrypted, a
    Fernet token: studies/assessment/llm/keys.py) and never shown again: pages say only whether one is
    set."""

    membership = models.OneToOneField("studies.StudyAssessor", on_delete=models.CASCADE, related_name="llm")
    endpoint_url = models.URLField(
        max_length=500, help_text="The server's base URL, e.g. http://127.0.0.1:11434/v1 (Ollama)."
    )
    model_name = models.CharField(max_length=200, help_text="The model the endpoint is asked for.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # The assessor's settings (migration 0033). The table is new in 0032 and carries no integrity trigger, so
    # SQLite rebuilding it for these defaults loses nothing.
    api_key_encrypted = models.TextField(blank=True, default="", editable=False)
    prompt_template = models.TextField(default="")
    passage_max_chars = models.PositiveIntegerField(default=4000)
    requests_per_minute = models.PositiveIntegerField(default=60)
    max_retries = models.PositiveSmallIntegerField(default=3)
    timeout_seconds = models.PositiveIntegerField(default=60)
    max_answer_tokens = models.PositiveIntegerField(default=200)
    temperature = models.FloatField(default=0.0)
    # Prices per million tokens (any currency, the cap's); without prices the cap counts tokens.
    price_input_per_million = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    price_output_per_million = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    cost_cap = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    token_cap = models.PositiveBigIntegerField(null=True, blank=True)
    # The model's grade (0-3, as text) -> the study's grade; fixed when the assessor is created or edited.
    grade_map = models.JSONField(default=dict)

    class Meta:
        ordering = ["membership__study", "id"]

    def __str__(self):
        return f"{self.model_name} assesses {self.membership.study}"

    @property
    def has_api_key(self) -> bool:
        return bool(self.api_key_encrypted)

    @property
    def priced(self) -> bool:
        return self.price_input_per_million is not None and self.price_output_per_million is not None


class LLMRun(models.Model):
    """One pass of an LLM assessor over the pool documents it has not graded yet (all scenarios, or some)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        CANCELLED = "cancelled", "Cancelled"
        COST_CAP = "cost_cap", "Stopped: cost cap"
        FAILED = "failed", "Failed"

    FINISHED = (Status.DONE, Status.CANCELLED, Status.COST_CAP, Status.FAILED)

    assessor = models.ForeignKey(LLMAssessor, on_delete=models.CASCADE, related_name="runs")
    scenario_ids = models.JSONField(default=list, blank=True, help_text="Empty: every scenario.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    error = models.CharField(max_length=300, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"run {self.pk} of {self.assessor} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in self.FINISHED


class LLMRequest(models.Model):
    """One request to the model and its answer, kept whatever came of it (one row per attempt)."""

    class Status(models.TextChoices):
        OK = "ok", "ok"
        HTTP_ERROR = "http_error", "HTTP error"
        TIMEOUT = "timeout", "timed out"
        MALFORMED = "malformed", "malformed answer"
        REFUSED = "refused", "refused address"
        UNREACHABLE = "unreachable", "could not connect"

    run = models.ForeignKey(LLMRun, on_delete=models.CASCADE, related_name="requests")
    pool_document = models.ForeignKey(
        "studies.PoolDocument", null=True, on_delete=models.SET_NULL, related_name="llm_requests"
    )
    document_external_id = models.CharField(max_length=200)
    attempt = models.PositiveSmallIntegerField(default=1)
    model_name = models.CharField(max_length=200)
    prompt_hash = models.CharField(max_length=64)
    messages = models.JSONField(help_text="The chat messages sent.")
    raw_answer = models.TextField(blank=True)
    model_grade = models.SmallIntegerField(null=True, blank=True, help_text="The grade the model gave (0-3).")
    grade = models.SmallIntegerField(
        null=True, blank=True, help_text="On the study's scale; stored as judged."
    )
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=20, choices=Status.choices)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=300, blank=True)
    sent_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return f"{self.document_external_id} attempt {self.attempt}: {self.status}"
