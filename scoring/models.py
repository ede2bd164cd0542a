"""Scoring runs and their stored results (docs/dashboards.md).

A ScoringRun holds a study, every option of docs/scoring-eval.md and the reference version it used. Its
results are one SessionScore per session (summaries as columns, curves as float64 bytes up to the session's
own end) and one QueryScore per query (sDCG at X and the sDCG-by-rank vector to top 100 of the paper's Figure
1), so the dashboards read them without recomputing. Both are written by upserts keyed by (run, session) and
(run, query): a re-delivered task writes the same rows again and changes nothing.
"""

import numpy as np
from django.conf import settings
from django.db import models
from django.db.models import Q

from studies.models import Participant, Query, ReferenceVersion, Scenario, SearchSession, Study, System

from .lib.session import DUPLICATES, FORMULATIONS, SCANS, SHORT_LISTS

# The (b, bq) grid every run also scores (the sensitivity heatmap): the paper's 1.5 <= b, bq <= 10.
GRID_B = (1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 10.0)
GRID_BQ = (1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 10.0)
# Figure 1 looks at each query's sDCG by rank to this depth.
QUERY_DEPTH = 100


def _choices(values):
    return [(v, v) for v in values]


class ScoringRun(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for a worker"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    class Judgments(models.TextChoices):
        REFERENCE = "reference", "Reference (expert) judgments"
        PARTICIPANT = "participant", "The participant's own judgments"

    class Gain(models.TextChoices):
        LINEAR = "linear", "The weights"
        EXPONENTIAL = "exponential", "2^grade - 1"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="scoring_runs")
    label = models.CharField(max_length=200, blank=True)
    # The options of docs/scoring-eval.md, defaults as there.
    weights = models.JSONField(default=list)
    b = models.FloatField(default=2.0)
    bq = models.FloatField(default=4.0)
    top = models.PositiveIntegerField(default=10)
    formulation = models.CharField(max_length=20, choices=_choices(FORMULATIONS), default="2008")
    gain = models.CharField(max_length=20, choices=Gain.choices, default=Gain.LINEAR)
    duplicates = models.CharField(max_length=10, choices=_choices(DUPLICATES), default="every")
    short_lists = models.CharField(max_length=10, choices=_choices(SHORT_LISTS), default="pad")
    scan = models.CharField(max_length=10, choices=_choices(SCANS), default="fixed")
    # scan="exposure": a query's depth is the deepest rank on screen for at least this long.
    scan_min_visible_ms = models.PositiveIntegerField(default=1000, db_default=1000)
    judgments = models.CharField(max_length=20, choices=Judgments.choices, default=Judgments.REFERENCE)
    reference_version = models.ForeignKey(
        ReferenceVersion, null=True, blank=True, on_delete=models.SET_NULL, related_name="scoring_runs"
    )
    grid_b = models.JSONField(default=list)
    grid_bq = models.JSONField(default=list)
    # The other session measures to compute (scoring.lib.session_measures.MEASURES), and their parameters as
    # they were when the run was created, so a later change of a default does not change an old run's numbers.
    measures = models.JSONField(
        default=list, blank=True, help_text="Names of the other session measures this run computes, in order."
    )
    measure_params = models.JSONField(
        default=dict, blank=True, help_text="The MeasureParams fields the measures were computed with."
    )

    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)
    # A pass is one scoring of all (or, on a re-score, some) sessions; rows written by it carry its number,
    # so progress is a count of rows, the same however often a chunk is delivered.
    current_pass = models.PositiveIntegerField(default=0)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    # The study's live run: new sessions, changed judgments and reference versions re-score it.
    is_default = models.BooleanField(default=False)
    # The queue of re-scores owed (requeue_stale_runs reads it), never what a page shows: whether the run's
    # scores are current is decided when read (scoring/freshness.py).
    stale = models.BooleanField(
        default=False, help_text="A re-score is owed (the work queue); not whether the scores are current."
    )
    stale_since = models.DateTimeField(null=True, blank=True)
    # Chart cache generation: bumped whenever this run's results change.
    generation = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study"], condition=Q(is_default=True), name="scoring_run_one_default"
            ),
            models.CheckConstraint(condition=Q(b__gt=1), name="scoring_run_b_above_1"),
            models.CheckConstraint(condition=Q(bq__gt=1) & Q(bq__lt=1000), name="scoring_run_bq_range"),
            models.CheckConstraint(condition=Q(top__gte=1), name="scoring_run_top_from_1"),
        ]

    def __str__(self):
        return f"{self.study} run {self.pk}" + (f" ({self.label})" if self.label else "")

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)

    def parameters_text(self) -> str:
        weights = ",".join(f"{w:g}" for w in self.weights)
        version = f"v{self.reference_version.number}" if self.reference_version is not None else "none"
        judged = f"reference {version}" if self.judgments == self.Judgments.REFERENCE else "participant"
        return (
            f"weights {weights}, b {self.b:g}, bq {self.bq:g}, top {self.top}, {self.formulation}"
            f"{', exponential gain' if self.gain == self.Gain.EXPONENTIAL else ''}, duplicates "
            f"{self.duplicates}, "
            f"short lists {self.short_lists}, scan {self.scan}"
            f"{f' (on screen >= {self.scan_min_visible_ms} ms)' if self.scan == 'exposure' else ''}, "
            f"judgments {judged}"
        )


class SessionScore(models.Model):
    """One session's results in one run. Design columns are copied here so a chart is one query."""

    run = models.ForeignKey(ScoringRun, on_delete=models.CASCADE, related_name="session_scores")
    session = models.ForeignKey(SearchSession, on_delete=models.CASCADE, related_name="+")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="+")
    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="+")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="+")
    end_reason = models.CharField(max_length=20, blank=True)
    n_queries = models.PositiveSmallIntegerField()
    length = models.PositiveIntegerField(help_text="Curve positions up to the session's own end.")
    final = models.FloatField()
    ideal_final = models.FloatField()
    normalized_final = models.FloatField()
    last_query = models.FloatField()
    best_query = models.FloatField()
    average = models.FloatField()
    # No judgment at all for the session's scenario in the judgments scored against (the run's reference
    # version, or the participant's own): its 0 says nothing, so charts and tests leave it out by default.
    unjudged = models.BooleanField(default=False)
    # float64 bytes, `length` values each: the cumulated curve and its ideal up to the session's end.
    curve = models.BinaryField()
    ideal = models.BinaryField()
    # float32 bytes, (len(grid_b), len(grid_bq), 5 summaries): session_grid's values for this session.
    grid = models.BinaryField()
    measures = models.JSONField(
        default=dict,
        blank=True,
        help_text="The run's other session measures for this session, keyed by measure name: "
        '{"sdcg_per_query": 1.23, "nsdcg": 0.41, ...}, one float each (0 for an empty recall base, never '
        "NaN); only the measures the run selected (ScoringRun.measures) are present. Names and meanings: "
        "scoring.lib.session_measures.MEASURES and docs/scoring-sessions.md.",
    )
    pass_number = models.PositiveIntegerField()
    # What this row was scored on, so whether it is current is decided when read (scoring/freshness.py),
    # never remembered: the reference version of a run on reference judgments (null: unknown, shown stale),
    # and a checksum of the participant's judgments of a run on their own (freshness.judgments_checksum).
    reference_version = models.ForeignKey(
        ReferenceVersion, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    judgments_checksum = models.BigIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "session"], name="session_score_once_per_run"),
        ]
        indexes = [models.Index(fields=["run", "pass_number"])]

    def __str__(self):
        return f"run {self.run_id} session {self.session_id}: {self.final:.4g}"

    def curve_array(self) -> np.ndarray:
        return np.frombuffer(bytes(self.curve), dtype=np.float64)


class QueryScore(models.Model):
    """One query's results: sDCG at X (the session curve's cut) and, for Figure 1, its sDCG by rank to top
    100."""

    run = models.ForeignKey(ScoringRun, on_delete=models.CASCADE, related_name="query_scores")
    session = models.ForeignKey(SearchSession, on_delete=models.CASCADE, related_name="+")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveSmallIntegerField()
    is_last = models.BooleanField()
    sdcg = models.FloatField()
    by_rank = models.BinaryField(help_text="float32 bytes: sDCG at ranks 1..100")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "query"], name="query_score_once_per_run"),
        ]
        indexes = [models.Index(fields=["run", "session"])]

    def __str__(self):
        return f"run {self.run_id} query {self.query_id}: {self.sdcg:.4g}"


# --- Study planning: power by simulation (docs/planning.md; scoring/planning/) --------------------


class PowerPlan(models.Model):
    """A power curve asked for a study: the measure, the test, where the effect comes from, the participant
    counts and replications. Its Monte Carlo counts are PowerChunk rows; progress is kept here so a reload
    shows it. `key` hashes every parameter and the version of the data it reads, so an identical request
    reuses it."""

    Status = ScoringRun.Status  # a plan runs through the same states as a scoring run

    class Effect(models.TextChoices):
        SPECIFIED = "specified", "Specified: a difference and a spread"
        PILOT = "pilot", "From a pilot: resample the study's scored sessions"
        SIMULATED = "simulated", "Simulated: searchers on the study's own systems"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="power_plans")
    label = models.CharField(max_length=200, blank=True)
    summary = models.CharField(max_length=20, default="normalized_final")
    test = models.CharField(max_length=20, default="paired_t")
    alternative = models.CharField(max_length=20, default="two-sided")
    effect = models.CharField(max_length=20, choices=Effect.choices, default=Effect.SPECIFIED)
    first_system = models.ForeignKey(System, null=True, on_delete=models.SET_NULL, related_name="+")
    second_system = models.ForeignKey(System, null=True, on_delete=models.SET_NULL, related_name="+")
    difference = models.FloatField(null=True, blank=True)
    spread = models.FloatField(null=True, blank=True)
    between = models.FloatField(default=0.0)
    # The scoring parameters (and, for a pilot, the scores) the plan uses.
    run = models.ForeignKey(ScoringRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    simulated_participants = models.PositiveIntegerField(default=0)
    # The analysis population whose sessions a pilot resamples (studies/population.py; the study's default
    # when the plan was made, unless asked otherwise); null: a specified effect, or a plan from before
    # populations (every scored session).
    population = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001
    counts = models.JSONField(default=list)
    replications = models.PositiveIntegerField(default=500)
    alpha = models.FloatField(default=0.05)
    target = models.FloatField(default=0.8)
    seed = models.PositiveIntegerField(default=2026)
    key = models.CharField(max_length=64, db_index=True)
    # What the chunks resample, fixed when the plan starts: the pilot's (or the simulated) sessions' values
    # with their participant, scenario and system; and what the page says about it.
    sample = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(alpha__gt=0) & Q(alpha__lt=1), name="power_plan_alpha_range"),
            models.CheckConstraint(
                condition=Q(target__gt=0) & Q(target__lt=1), name="power_plan_target_range"
            ),
            models.CheckConstraint(condition=Q(replications__gte=1), name="power_plan_replications_from_1"),
        ]

    def __str__(self):
        return f"{self.study} power plan {self.pk}"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)

    @property
    def specified_effect(self) -> tuple[float, float]:
        """(difference, spread) of a specified effect, which power_plan_create never saves without both."""
        if self.difference is None or self.spread is None:
            raise ValueError(f"{self}: a specified effect without its difference and spread")
        return self.difference, self.spread


class PowerChunk(models.Model):
    """The rejections of `replications` simulated studies of `count` participants, replications start.. of the
    plan's stream for that count: upserted by (plan, count, start), so a re-delivered chunk counts once."""

    plan = models.ForeignKey(PowerPlan, on_delete=models.CASCADE, related_name="chunks")
    count = models.PositiveIntegerField()
    start = models.PositiveIntegerField()
    replications = models.PositiveIntegerField()
    rejections = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["plan", "count", "start"], name="power_chunk_once_per_plan"),
        ]

    def __str__(self):
        return f"plan {self.plan_id} n={self.count} from {self.start}: {self.rejections}/{self.replications}"


class Preregistration(models.Model):
    """A study's pre-registration (scoring/preregistration/, docs/preregistration.md): the researcher's
    answers while it is a draft; at the freeze, the document as it stood (the study's facts and the answers)
    with its SHA-256 and time. Nothing changes it after the freeze; deviations are derived when read."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="+")
    answers = models.JSONField(default=dict, blank=True)
    frozen_at = models.DateTimeField(null=True, blank=True)
    frozen_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    frozen = models.JSONField(default=dict, blank=True)
    digest = models.CharField(max_length=64, blank=True)

    def __str__(self):
        return f"pre-registration of study {self.study_id}" + (" (frozen)" if self.frozen_at else " (draft)")
