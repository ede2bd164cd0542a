"""What participants saw and attended to (docs/running-a-study.md, "Exposure and attention"): the
aggregates the `exposure` and `attention` events build, read by analysis without replaying the event log.
The raw reports stay in the log (Event) as they came. Import the models from `studies.models`."""

from django.db import models
from django.db.models import Q

from studies.models.core import Query, SearchSession, ShownResult


class ResultExposure(models.Model):
    """One shown result's exposure, summed over every report of it: how long it was at least half visible,
    the largest fraction of it ever visible, when it was first and last visible (ms after its page was
    shown), and the pointer's dwell and entries on it."""

    shown_result = models.OneToOneField(
        ShownResult, on_delete=models.CASCADE, primary_key=True, related_name="exposure"
    )
    first_visible_ms = models.PositiveIntegerField(
        null=True, blank=True
    )  # none: only read, never reported seen
    visible_ms = models.PositiveBigIntegerField(default=0)
    max_permille = models.PositiveSmallIntegerField(default=0)
    # When it last left the viewport (the last moment it was at least half visible, ms after its page was
    # shown; with first_visible_ms, the span it was on screen); none: never at least half visible.
    last_visible_ms = models.PositiveIntegerField(null=True, blank=True)
    hover_ms = models.PositiveBigIntegerField(default=0)
    hovers = models.PositiveIntegerField(default=0)
    # How far down the document opened from this result was read (the deepest point of its text on screen,
    # x 1000), from the document's close; none when it was never opened or not reported.
    read_permille = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(max_permille__lte=1000), name="result_exposure_permille"),
            models.CheckConstraint(
                condition=Q(read_permille__lte=1000), name="result_exposure_read_permille"
            ),
        ]

    # Its figures, as the archive and the replay write them (one list, so both always say the same).
    FIGURES = (
        "first_visible_ms",
        "last_visible_ms",
        "visible_ms",
        "max_permille",
        "hover_ms",
        "hovers",
        "read_permille",
    )

    def __str__(self):
        return f"exposure of {self.shown_result_id}: {self.visible_ms} ms"

    def figures(self) -> dict:
        return {name: getattr(self, name) for name in self.FIGURES}


class PageExposure(models.Model):
    """How far down a results page the participant scrolled (the deepest point of the list seen, x 1000)."""

    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="page_exposures", db_index=False)
    page = models.PositiveSmallIntegerField()
    scroll_permille = models.PositiveSmallIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["query", "page"], name="page_exposure_once"),
            models.CheckConstraint(condition=Q(scroll_permille__lte=1000), name="page_exposure_permille"),
        ]

    def __str__(self):
        return f"query {self.query_id} page {self.page}: scrolled to {self.scroll_permille}/1000"


class AttentionSpan(models.Model):
    """A stretch of a session when the participant was away: the tab hidden, the window blurred, or no input
    for the page's idle threshold; times in ms from the session's start. Active time is the session's
    duration less the union of its spans (studies/participation/events/exposure.py, active_ms)."""

    class Kind(models.TextChoices):
        HIDDEN = "hidden", "tab hidden"
        BLUR = "blur", "window not focused"
        IDLE = "idle", "idle"

    session = models.ForeignKey(
        SearchSession, on_delete=models.CASCADE, related_name="attention_spans", db_index=False
    )
    kind = models.CharField(max_length=6, choices=Kind.choices)
    start_ms = models.PositiveBigIntegerField()
    duration_ms = models.PositiveBigIntegerField()

    class Meta:
        ordering = ["session", "start_ms", "id"]
        indexes = [models.Index(fields=["session", "start_ms"], name="attention_span_session")]

    def __str__(self):
        return f"{self.kind} {self.start_ms}+{self.duration_ms} ms"
