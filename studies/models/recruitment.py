"""Recruitment on a panel (Prolific, MTurk, a generic pool): a study's public link and its settings, and the
panel's status notifications as received. The rules live in studies/participation/recruitment/; the
participant's own columns (state, plan row, panel ids) are on Participant (core.py). docs/recruitment.md.
"""

import secrets
import string

from django.db import models
from django.db.models import Q

from studies.models.core import Participant, Study

PANELS = [("prolific", "Prolific"), ("mturk", "Amazon Mechanical Turk"), ("generic", "Generic pool (?pid=)")]
PANEL_STATUSES = [
    ("returned", "Returned"),
    ("timed_out", "Timed out"),
    ("approved", "Approved"),
    ("rejected", "Rejected"),
    ("awaiting_review", "Awaiting review"),
    ("active", "Active"),
    ("screened_out", "Screened out"),
]


EFFORT_OUTCOMES = [
    ("failed", "Failed: the failed-checks code"),
    ("flagged", "Flagged: the completed code, flagged for the researcher"),
]
CODE_MODES = [
    ("study", "One code for the whole study"),
    ("per_participant", "A code generated for each participant"),
    ("pool", "A code from a pool I upload, each handed out once"),
]


def new_public_token() -> str:
    return secrets.token_urlsafe(16)


def new_status_secret() -> str:
    return secrets.token_urlsafe(32)


def new_completion_code() -> str:
    # Panels compare codes as typed: capitals and digits, without the ones read alike (0/O, 1/I).
    alphabet = "".join(c for c in string.ascii_uppercase + string.digits if c not in "01IO")
    return "".join(secrets.choice(alphabet) for _ in range(8))


class Recruitment(models.Model):
    """A study's recruitment settings: made on first use
    (studies.participation.recruitment.recruitment_of)."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="recruitment")
    # The public link /join/<public_token>/ creates a participant on first visit, only while the study is open
    # (Study.status, design/lifecycle.py: the one switch the study page and the recruitment page share).
    public_token = models.CharField(max_length=40, unique=True, default=new_public_token, editable=False)
    panel = models.CharField(max_length=20, choices=PANELS, default="prolific")
    # Where the last page sends a participant, "{code}" replaced by their completion code; blank: the
    # panel's own (Prolific's), or none (the page shows the code to paste).
    completion_url = models.CharField(max_length=500, blank=True)
    code_completed = models.CharField(max_length=40, default=new_completion_code)
    code_screened_out = models.CharField(max_length=40, default=new_completion_code)
    code_failed_checks = models.CharField(max_length=40, default=new_completion_code)
    # The panel's status notifications carry this (X-SessionLab-Secret); never shown after it is set.
    status_secret = models.CharField(max_length=64, default=new_status_secret, editable=False)
    # The study-level limit (the per-scenario one is Study.time_limit_minutes): this long after first opening
    # their link a participant who has not completed is timed out and their row freed. Also the Latin square's
    # cutoff: only participants started within it count as active.
    time_limit_minutes = models.PositiveIntegerField(null=True, blank=True)
    # [[scenario code, system code], ...]: cells closed to new arrivals (rows touching one are not issued).
    closed_cells = models.JSONField(default=list, blank=True)
    # Attention and comprehension checks, shown after the questionnaire and before the first scenario:
    # {"preset": "prolific"|"strict"|"none", "items": [{"name", "kind": attention|comprehension, "label",
    # "choices", "answer"}]} (studies/participation/recruitment/: CHECK_PRESETS, check_items_errors).
    checks = models.JSONField(default=dict, blank=True)
    # Minimum effort per task, checked when a participant completes (studies/participation/recruitment/
    # effort.py; the presets fill these, 0 asks nothing). Below them: "failed" gives the failed-checks code,
    # "flagged" the completed code with a flag for the researcher.
    effort_min_queries = models.PositiveIntegerField(default=0)
    effort_min_judgments = models.PositiveIntegerField(default=0)
    effort_min_active_seconds = models.PositiveIntegerField(default=0)
    effort_outcome = models.CharField(max_length=10, choices=EFFORT_OUTCOMES, default="failed")
    # The completed code: one per study (code_completed), one generated per participant, or one per
    # participant from a pool the researcher uploaded (CompletionCode; recruitment/codes.py).
    code_mode = models.CharField(max_length=20, choices=CODE_MODES, default="study")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(panel__in=["prolific", "mturk", "generic"]), name="recruitment_panel_known"
            ),
            models.CheckConstraint(
                condition=Q(effort_outcome__in=["failed", "flagged"]), name="recruitment_effort_outcome_known"
            ),
            models.CheckConstraint(
                condition=Q(code_mode__in=["study", "per_participant", "pool"]),
                name="recruitment_code_mode_known",
            ),
        ]

    def __str__(self):
        return f"recruitment of {self.study}"


class PanelNotification(models.Model):
    """One status notification from the panel (the endpoint or a row of an imported export), kept once by its
    key: a replay answers what the first one did."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="panel_notifications")
    key = models.CharField(max_length=200)
    participant = models.ForeignKey(
        Participant, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    panel_id = models.CharField(max_length=64)
    status = models.CharField(max_length=20, choices=PANEL_STATUSES)
    sent_at = models.DateTimeField(null=True, blank=True)  # the panel's time, when it gives one
    received_at = models.DateTimeField(auto_now_add=True)
    source = models.CharField(max_length=20, default="endpoint")  # endpoint | import
    outcome = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["study", "received_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "key"], name="panel_notification_once"),
        ]

    def __str__(self):
        return f"{self.panel_id}: {self.status}"


class CompletionCode(models.Model):
    """A completed code of one participant: generated for them, or one of the pool the researcher uploaded
    (participant empty until handed out, once: a conditional UPDATE, recruitment/codes.py)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="completion_codes")
    code = models.CharField(max_length=40)
    participant = models.OneToOneField(
        Participant, null=True, blank=True, on_delete=models.CASCADE, related_name="completion_code"
    )
    source = models.CharField(max_length=10, choices=[("generated", "Generated"), ("pool", "Pool")])
    added_at = models.DateTimeField(auto_now_add=True)
    handed_out_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study", "id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "code"], name="completion_code_once_per_study"),
            models.CheckConstraint(
                condition=Q(participant__isnull=True) | Q(handed_out_at__isnull=False),
                name="completion_code_handed_out_has_time",
            ),
        ]
        indexes = [models.Index(fields=["study", "participant"], name="completion_code_free")]

    def __str__(self):
        return f"{self.code} ({self.source})"


class SchedulerHeartbeat(models.Model):
    """When a scheduler (Celery beat, or cron running manage.py sweep_overdue) last ran a periodic task: the
    recruitment page reads it to say whether a scheduler sweeps, or the sweep runs only on arrivals and
    requests. Written by the task itself, in the database (a per-process cache would hide another
    process's beat)."""

    task = models.CharField(max_length=100, unique=True)
    ran_at = models.DateTimeField()

    def __str__(self):
        return f"{self.task} at {self.ran_at}"


class BeatTurn(models.Model):
    """When a periodic task last took its turn (studies/beat.py): one row per task, claimed by a
    conditional UPDATE (or the first INSERT) in the database every node shares, so that of two beats' sends
    within one interval exactly one runs, with or without a shared cache. `taken_at` is the database's clock,
    the one clock every node reads. Beside SchedulerHeartbeat, which says a scheduler runs; this only
    dedupes."""

    task = models.CharField(max_length=200, unique=True)
    taken_at = models.DateTimeField()

    def __str__(self):
        return f"{self.task} turn at {self.taken_at}"
