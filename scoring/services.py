"""Scoring runs: create them, score their sessions chunk by chunk, keep the study's default run current.

Writes live here; `scoring/tasks.py` only calls these with ids. The math is `scoring/lib/session.py`.

Hooks for the rest of the project (call them inside the transaction that made the change; the re-score is
queued on commit and never blocks the caller):
- `study_scores_mark_stale(study_id=..., session_ids=[...])` after a session ends or a participant's judgments
  change (session_ids=None re-scores the whole study);
- `reference_version_changed(study_id=...)` after a new reference version is published or imported.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields, replace
from datetime import timedelta

import numpy as np
from django.db import transaction
from django.db.models import Case, Exists, F, OuterRef, Q, TextField, Value, When
from django.utils import timezone

from sessionlab import queueing
from studies.models import (
    Event,
    Judgment,
    Query,
    ReferenceJudgment,
    ReferenceVersion,
    SearchSession,
    ShownResult,
    Study,
)

from .lib.metrics import GradeError
from .lib.session import (
    PAPER_WEIGHTS,
    SUMMARIES,
    SessionParams,
    default_weights,
    encode_sessions,
    score_sessions,
    session_grid,
)
from .lib.session_measures import TIME_MEASURES, MeasureParams, TrailQuery, check_measures, score_measures
from .models import GRID_B, GRID_BQ, QUERY_DEPTH, QueryScore, ScoringRun, SessionScore

logger = logging.getLogger(__name__)

DEFAULT_WEIGHTS = PAPER_WEIGHTS  # on a 0..3 scale; other scales: session.default_weights
# Sessions per chunk task: small enough that a chunk's arrays stay a few MB, large enough to be worth a task.
CHUNK_SIZE = 500


class ScoringError(ValueError):
    """A run that cannot be scored as asked (bad options, no reference judgments, a grade without weight)."""


# --- parameters -----------------------------------------------------------------------------------------------


def run_params(run: ScoringRun) -> SessionParams:
    """The SessionParams of a run. Exponential gain turns grade g into 2^g - 1 (SPEC: log2 with exponential
    gain); kanoulas2011 ignores the weights, as the library does."""
    weights = tuple(run.weights) or DEFAULT_WEIGHTS
    if run.gain == ScoringRun.Gain.EXPONENTIAL:
        weights = tuple(2.0**grade - 1.0 for grade in range(len(weights)))
    return SessionParams(
        weights=weights,
        b=run.b,
        bq=run.bq,
        top=run.top,
        formulation=run.formulation,
        duplicates=run.duplicates,
        short_lists=run.short_lists,
        scan=run.scan,
    )


def scoring_run_create(
    *,
    study: Study,
    created_by=None,
    label: str = "",
    weights: Sequence[float] | None = None,
    b: float = 2.0,
    bq: float = 4.0,
    top: int = 10,
    formulation: str = "2008",
    gain: str = ScoringRun.Gain.LINEAR,
    duplicates: str = "every",
    short_lists: str = "pad",
    scan: str = "fixed",
    judgments: str = ScoringRun.Judgments.REFERENCE,
    measures: Sequence[str] = (),
    make_default: bool | None = None,
) -> ScoringRun:
    """Create a run with the latest reference version and queue its scoring on commit. The study's first run
    becomes its default run unless make_default=False. Without weights, those of the study's grade scale
    (`session.default_weights`: the paper's 0, 1, 10, 100 on 0..3). `measures` names the other session measures
    to compute for each session (scoring.lib.session_measures.MEASURES); their parameters are the library's
    defaults with the run's top, b and bq, stored on the run."""
    weights = tuple(float(w) for w in (default_weights(study.grade_values()) if weights is None else weights))
    try:
        SessionParams(
            weights=weights,
            b=b,
            bq=bq,
            top=top,
            formulation=formulation,
            duplicates=duplicates,
            short_lists=short_lists,
            scan=scan,
        )
    except ValueError as exc:
        raise ScoringError(str(exc)) from None
    if gain not in ScoringRun.Gain.values:
        raise ScoringError(f"unknown gain {gain!r}; choose linear or exponential")
    if judgments not in ScoringRun.Judgments.values:
        raise ScoringError(f"unknown judgments {judgments!r}; choose reference or participant")
    grades = study.grade_values()
    try:
        measures = list(check_measures(list(measures)))
        measure_params = measure_params_for(top=top, b=b, bq=bq, grades=grades)
    except ValueError as exc:
        raise ScoringError(str(exc)) from None
    if formulation != "kanoulas2011" and grades and max(grades) >= len(weights):
        raise ScoringError(
            f"the study's grades go to {max(grades)} but the weights give gains for grades 0..{len(weights) - 1}"
        )
    version = study.reference_versions.order_by("-number").first()
    if judgments == ScoringRun.Judgments.REFERENCE and version is None:
        raise ScoringError(
            "the study has no reference judgments yet: publish or import a reference version, "
            "or score against the participants' own judgments"
        )
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        has_default = ScoringRun.objects.filter(study=locked, is_default=True).exists()
        default = (not has_default) if make_default is None else make_default
        if default and has_default:
            ScoringRun.objects.filter(study=locked, is_default=True).update(is_default=False)
        run = ScoringRun.objects.create(
            study=study,
            created_by=created_by,
            label=label,
            weights=list(weights),
            b=b,
            bq=bq,
            top=top,
            formulation=formulation,
            gain=gain,
            duplicates=duplicates,
            short_lists=short_lists,
            scan=scan,
            judgments=judgments,
            reference_version=version if judgments == ScoringRun.Judgments.REFERENCE else None,
            grid_b=list(GRID_B),
            grid_bq=list(GRID_BQ),
            is_default=default,
            measures=measures,
            measure_params=asdict(measure_params),
        )
        _queue_pass(run.pk, None)
    return run


def measure_params_for(*, top: int, b: float, bq: float, grades: Sequence[int]) -> MeasureParams:
    """The other measures' parameters for a run: the library's defaults, k = top X, the run's b and bq, and
    sRBP's top grade from the study's scale (1 when the scale has no grade above 0)."""
    return MeasureParams(k=top, b=b, bq=bq, grade_max=max([1, *grades]))


def run_measure_params(run: ScoringRun) -> MeasureParams:
    """The stored parameters (fields a later version dropped are ignored; ones it added take their defaults)."""
    known = {f.name for f in fields(MeasureParams)}
    stored = {name: value for name, value in (run.measure_params or {}).items() if name in known}
    return MeasureParams(**{"k": run.top, "b": run.b, "bq": run.bq, **stored})


def scoring_run_make_default(*, run: ScoringRun) -> ScoringRun:
    with transaction.atomic():
        ScoringRun.objects.filter(study_id=run.study_id, is_default=True).exclude(pk=run.pk).update(
            is_default=False
        )
        ScoringRun.objects.filter(pk=run.pk).update(is_default=True)
    run.is_default = True
    return run


# A pass that could not be queued (the broker was down) is owed: the run says so in its error, stays stale
# through partial passes, and `requeue_stale_runs` queues a full pass, which clears it.
NOT_QUEUED = "not queued: "


def _queue_pass(run_id: int, session_ids: list[int] | None) -> None:
    """Queue a pass on commit. A broker that is down does not fail the caller (sessionlab/queueing.py)."""

    def owed(exc):
        ScoringRun.objects.filter(pk=run_id).update(
            stale=True,
            stale_since=timezone.now(),
            error=f"{NOT_QUEUED}the broker was unreachable ({exc}); `manage.py requeue_stale_runs` queues it"[
                :2000
            ],
        )

    queueing.delay_on_commit(
        queueing.task_named("scoring.tasks.scoring_run_start_task"), run_id, session_ids, on_failure=owed
    )


# --- the hooks ----------------------------------------------------------------------------------------------------


def study_scores_mark_stale(*, study_id: int, session_ids: Iterable[int] | None = None) -> ScoringRun | None:
    """Mark the study's default run stale and queue, on commit, a re-score of `session_ids` (all sessions if
    None). Call it after a session ends, or a participant's judgments change. Returns the run, or None if the
    study has no default run yet."""
    run = ScoringRun.objects.filter(study_id=study_id, is_default=True).first()
    if run is None:
        return None
    ids = None if session_ids is None else sorted({int(pk) for pk in session_ids})
    ScoringRun.objects.filter(pk=run.pk).update(stale=True, stale_since=timezone.now())
    _queue_pass(run.pk, ids)
    return run


def reference_version_changed(*, study_id: int) -> ScoringRun | None:
    """Point the study's default run at the latest reference version and re-score, on commit, only the
    sessions of scenarios whose topic's judgments differ between the old and the new version. Nothing to do
    when the default run scores against the participants' own judgments."""
    run = ScoringRun.objects.filter(study_id=study_id, is_default=True).first()
    if run is None or run.judgments != ScoringRun.Judgments.REFERENCE:
        return None
    latest = ReferenceVersion.objects.filter(study_id=study_id).order_by("-number").first()
    if latest is None or latest.pk == run.reference_version_id:
        return None
    changed = _changed_topics(run.reference_version_id, latest.pk)
    ScoringRun.objects.filter(pk=run.pk).update(reference_version=latest)
    if not changed:
        return run
    session_ids = list(
        SearchSession.objects.filter(
            assignment__participant__study_id=study_id,
            assignment__scenario__topic_id__in=changed,
            assignment__participant__preview_at__isnull=True,
        ).values_list("pk", flat=True)
    )
    if session_ids:
        ScoringRun.objects.filter(pk=run.pk).update(stale=True, stale_since=timezone.now())
        _queue_pass(run.pk, session_ids)
    return run


def _changed_topics(old_version_id: int | None, new_version_id: int) -> set[str]:
    def judged(version_id):
        if version_id is None:
            return set()
        return set(
            ReferenceJudgment.objects.filter(version_id=version_id).values_list(
                "topic_id", "document_id", "grade"
            )
        )

    return {topic for topic, _, _ in judged(old_version_id) ^ judged(new_version_id)}


# --- a pass: start, chunks, finish ----------------------------------------------------------------------------------


def _scorable(study_id: int):
    """Sessions a run scores: ended (not withdrawn) with at least one query, never a preview's."""
    return SearchSession.objects.filter(
        Exists(Query.objects.filter(session_id=OuterRef("pk"))),
        assignment__participant__study_id=study_id,
        ended_at__isnull=False,
        assignment__participant__preview_at__isnull=True,
    ).exclude(end_reason=SearchSession.EndReason.WITHDRAWN)


def scoring_pass_start(
    *, run_id: int, session_ids: list[int] | None = None, chunk_size: int = CHUNK_SIZE
) -> tuple[int, list[list[int]]] | None:
    """Begin a pass over the run's sessions (or only `session_ids`): drop results of sessions that are no
    longer scorable, number the pass, and return (pass number, chunks of session ids). None if the run is gone."""
    run = ScoringRun.objects.filter(pk=run_id).first()
    if run is None:
        return None
    scorable = _scorable(run.study_id)
    if session_ids is not None:
        scorable = scorable.filter(pk__in=session_ids)
        gone = set(session_ids) - set(scorable.values_list("pk", flat=True))
        if gone:
            SessionScore.objects.filter(run_id=run_id, session_id__in=gone).delete()
            QueryScore.objects.filter(run_id=run_id, session_id__in=gone).delete()
    ids = sorted(scorable.values_list("pk", flat=True))
    with transaction.atomic():
        ScoringRun.objects.filter(pk=run_id).update(current_pass=F("current_pass") + 1)
        run.refresh_from_db(fields=["current_pass"])
        # Only a full pass pays what a pass that could not be queued owed.
        error = (
            Value("")
            if session_ids is None
            else Case(
                When(error__startswith=NOT_QUEUED, then=F("error")),
                default=Value(""),
                output_field=TextField(),
            )
        )
        ScoringRun.objects.filter(pk=run_id).update(
            status=ScoringRun.Status.RUNNING,
            error=error,
            progress_done=0,
            progress_total=len(ids),
            started_at=timezone.now(),
            finished_at=None,
        )
    return run.current_pass, [ids[i : i + chunk_size] for i in range(0, len(ids), chunk_size)]


def scoring_pass_finish(*, run_id: int, pass_number: int, full: bool) -> None:
    """Close a pass: on a full pass drop rows of sessions it did not score; mark the run done (unless a chunk
    failed) and fresh (unless marked stale again since the pass began); bump the chart cache generation."""
    run = ScoringRun.objects.filter(pk=run_id).first()
    if run is None:
        return
    if full and run.current_pass == pass_number:
        SessionScore.objects.filter(run_id=run_id).exclude(pass_number=pass_number).delete()
        QueryScore.objects.filter(run_id=run_id).exclude(
            session_id__in=SessionScore.objects.filter(run_id=run_id).values("session_id")
        ).delete()
    current = ScoringRun.objects.filter(pk=run_id, current_pass=pass_number)
    done = SessionScore.objects.filter(run_id=run_id, pass_number=pass_number).count()
    current.exclude(status=ScoringRun.Status.FAILED).update(
        status=ScoringRun.Status.DONE, progress_done=done, finished_at=timezone.now()
    )
    fresh = current.filter(status=ScoringRun.Status.DONE).exclude(error__startswith=NOT_QUEUED)
    fresh.filter(stale_since__isnull=True).update(stale=False)
    fresh.filter(stale_since__lte=F("started_at")).update(stale=False)
    ScoringRun.objects.filter(pk=run_id).update(generation=F("generation") + 1)


def scoring_run_fail(*, run_id: int, message: str) -> None:
    ScoringRun.objects.filter(pk=run_id).update(
        status=ScoringRun.Status.FAILED, error=message[:2000], finished_at=timezone.now()
    )


def scoring_chunk_score(*, run_id: int, pass_number: int, session_ids: Sequence[int]) -> int:
    """Score one chunk of sessions and upsert their results, keyed by (run, session) and (run, query): doing it
    twice leaves one result set. Returns the number of sessions scored."""
    run = ScoringRun.objects.filter(pk=run_id).select_related("study").first()
    if run is None:
        return 0
    try:
        chunk = _chunk_load(run, session_ids)
        if not chunk.sessions:
            return 0
        rows, query_rows = _chunk_score(run, chunk, pass_number)
    except (ScoringError, GradeError, ValueError) as exc:
        logger.warning("scoring run %s failed: %s", run_id, exc)
        scoring_run_fail(run_id=run_id, message=str(exc))
        return 0
    with transaction.atomic():
        SessionScore.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["run", "session"],
            update_fields=_SESSION_FIELDS,
            batch_size=500,
        )
        QueryScore.objects.bulk_create(
            query_rows,
            update_conflicts=True,
            unique_fields=["run", "query"],
            update_fields=_QUERY_FIELDS,
            batch_size=1000,
        )
        done = SessionScore.objects.filter(run_id=run_id, pass_number=pass_number).count()
        ScoringRun.objects.filter(pk=run_id, current_pass=pass_number).update(progress_done=done)
    return len(rows)


_SESSION_FIELDS = [
    "participant",
    "scenario",
    "system",
    "end_reason",
    "n_queries",
    "length",
    *SUMMARIES,
    "ideal_final",
    "unjudged",
    "curve",
    "ideal",
    "grid",
    "measures",
    "pass_number",
]
_QUERY_FIELDS = ["session", "position", "is_last", "sdcg", "by_rank"]


@dataclass
class _Chunk:
    sessions: list[tuple]  # (id, participant_id, scenario_id, system_id, topic_id, end_reason)
    query_ids: list[list[int]]
    results: list[list[list]]
    scanned: list[list[int]] | None
    topics: list[str]
    qrels: dict[str, dict[int, int]]
    trails: list[list[TrailQuery]] | None = None  # for the time measures


def _chunk_load(run: ScoringRun, session_ids: Sequence[int]) -> _Chunk:
    """Everything a chunk needs, in four or five queries whatever its size."""
    # Looked up by primary key first (the study is checked on the rows): SQLite's planner would otherwise
    # walk the whole study from its participants.
    rows = (
        SearchSession.objects.filter(
            pk__in=list(session_ids), ended_at__isnull=False, assignment__participant__preview_at__isnull=True
        )
        .exclude(end_reason=SearchSession.EndReason.WITHDRAWN)
        .order_by("pk")
        .values_list(
            "pk",
            "assignment__participant_id",
            "assignment__scenario_id",
            "assignment__system_id",
            "assignment__scenario__topic_id",
            "end_reason",
            "assignment__participant__study_id",
        )
    )
    candidates = [row[:6] for row in rows if row[6] == run.study_id]
    queries = defaultdict(list)
    marks = {}
    for query_id, session_id, mark in (
        Query.objects.filter(session_id__in=[row[0] for row in candidates])
        .order_by("session_id", "position")
        .values_list("pk", "session_id", "scan_mark_rank")
    ):
        queries[session_id].append(query_id)
        marks[query_id] = mark
    sessions = [row for row in candidates if queries.get(row[0])]
    ids = [row[0] for row in sessions]
    observed = run.scan == "observed"
    timed = any(name in TIME_MEASURES for name in run.measures or ())
    deepest = {}
    if observed or timed:
        deepest = _observed_depths(ids, queries, marks)
    depth = max(run.top, QUERY_DEPTH, max(deepest.values(), default=0))
    shown = defaultdict(dict)
    for query_id, rank, document_id in ShownResult.objects.filter(
        query__session_id__in=ids, rank__lte=depth
    ).values_list("query_id", "rank", "document_id"):
        shown[query_id][rank] = document_id

    def ranked(query_id):
        by_rank = shown.get(query_id, {})
        # A gap (a page never fetched) is an unjudged, never-repeated cell: gain 0.
        return [by_rank.get(rank, ("gap", query_id, rank)) for rank in range(1, max(by_rank, default=0) + 1)]

    results = [[ranked(q) for q in queries[s]] for s in ids]
    scanned = [[deepest.get(q, run.top) for q in queries[s]] for s in ids] if observed else None
    qrels: dict[str, dict[int, int]] = defaultdict(dict)
    if run.judgments == ScoringRun.Judgments.PARTICIPANT:
        # Each session is scored against its participant's own grades in that session.
        topics = [f"{row[4]}|{row[0]}" for row in sessions]
        for session_id, topic, document_id, grade in Judgment.objects.filter(session_id__in=ids).values_list(
            "session_id", "session__assignment__scenario__topic_id", "document_id", "grade"
        ):
            qrels[f"{topic}|{session_id}"][document_id] = grade
    else:
        topics = [row[4] for row in sessions]
        for topic, document_id, grade in ReferenceJudgment.objects.filter(
            version_id=run.reference_version_id, topic_id__in=set(topics)
        ).values_list("topic_id", "document_id", "grade"):
            qrels[topic][document_id] = grade
    trails = _trails(ids, queries, deepest) if timed else None
    return _Chunk(sessions, [queries[s] for s in ids], results, scanned, topics, dict(qrels), trails)


def _trails(ids: list[int], queries: dict[int, list[int]], deepest: dict[int, int]) -> list[list[TrailQuery]]:
    """Each session's trail for the time measures (docs/scoring-sessions.md, "Time-biased gain").

    A query starts at its issued_at less the session's started_at: both are the server's clock, so no client
    clock enters the difference. Its depth is the observed one (scan mark or deepest document opened), else the
    top X. Opened documents are those of acknowledged document_open or document_close events, at the rank they
    were first shown in that query's list; a document's dwell is the sum of the dwell_ms its closes report (a
    duration measured on the participant's clock, so its offset cancels), None when no close says it. Clicks are
    always logged here, so a query with none opened has an empty `opened`, not an unknown one."""
    started = dict(SearchSession.objects.filter(pk__in=ids).values_list("pk", "started_at"))
    issued = dict(Query.objects.filter(session_id__in=ids).values_list("pk", "issued_at"))
    positions = {(s, p): q for s, qs in queries.items() for p, q in enumerate(qs, start=1)}
    opened = defaultdict(set)  # query id -> external ids of the documents opened from its list
    dwell: dict[tuple[int, str], float] = {}
    for session_id, kind, data in Event.objects.filter(
        session_id__in=ids, type__in=["document_open", "document_close"], payload__ack__ok=True
    ).values_list("session_id", "type", "payload__data"):
        data = data if isinstance(data, dict) else {}
        query_id = positions.get((session_id, data.get("query")))
        doc = data.get("doc")
        if query_id is None or not isinstance(doc, str):
            continue
        opened[query_id].add(doc)
        ms = data.get("dwell_ms")
        if kind == "document_close" and isinstance(ms, int | float) and not isinstance(ms, bool) and ms >= 0:
            dwell[query_id, doc] = dwell.get((query_id, doc), 0.0) + ms / 1000.0
    rank_of: dict[tuple[int, str], int] = {}
    if opened:
        for query_id, external_id, rank in ShownResult.objects.filter(
            query_id__in=list(opened), document__external_id__in={d for docs in opened.values() for d in docs}
        ).values_list("query_id", "document__external_id", "rank"):
            if external_id in opened[query_id]:
                key = (query_id, external_id)
                rank_of[key] = min(rank, rank_of.get(key, rank))
    by_query = defaultdict(dict)
    for (query_id, doc), rank in rank_of.items():
        by_query[query_id][rank] = dwell.get((query_id, doc))
    return [
        [
            TrailQuery(
                start=max(0.0, (issued[q] - started[s]).total_seconds()),
                depth=deepest.get(q),
                opened=by_query.get(q, {}),
            )
            for q in queries[s]
        ]
        for s in ids
    ]


def _observed_depths(
    ids: list[int], queries: dict[int, list[int]], marks: dict[int, int | None]
) -> dict[int, int]:
    """Each query's observed scan depth, "the deepest rank they viewed or marked": its scan mark, or the deepest
    rank of a document opened from its list, whichever is deeper (queries with neither are left out).

    An open event stores {"data": {"doc", "query" (position), "rank"}, "ack": {...}}. Only acknowledged opens
    count, and the rank is the one the document was shown at in that query's list (ShownResult), not the
    client's word for it: a forged rank would otherwise set the depth of every array of the chunk."""
    positions = {(s, p): q for s, qs in queries.items() for p, q in enumerate(qs, start=1)}
    opened = defaultdict(set)  # query id -> external ids of the documents opened from its list
    for session_id, data in Event.objects.filter(
        session_id__in=ids, type="document_open", payload__ack__ok=True
    ).values_list("session_id", "payload__data"):
        data = data if isinstance(data, dict) else {}
        query_id = positions.get((session_id, data.get("query")))
        if query_id is not None and isinstance(data.get("doc"), str):
            opened[query_id].add(data["doc"])
    first_shown: dict[tuple[int, str], int] = {}  # (query, document) -> the rank it was first shown at
    if opened:
        for query_id, external_id, rank in ShownResult.objects.filter(
            query_id__in=list(opened), document__external_id__in={d for docs in opened.values() for d in docs}
        ).values_list("query_id", "document__external_id", "rank"):
            if external_id in opened[query_id]:
                key = (query_id, external_id)
                first_shown[key] = min(rank, first_shown.get(key, rank))
    deepest: dict[int, int] = {}
    for (query_id, _), rank in first_shown.items():
        deepest[query_id] = max(rank, deepest.get(query_id, 0))
    for query_id, mark in marks.items():
        if mark is not None and mark > deepest.get(query_id, 0):
            deepest[query_id] = mark
    return deepest


def _chunk_score(run: ScoringRun, chunk: _Chunk, pass_number: int):
    params = run_params(run)
    depth = max(run.top, QUERY_DEPTH, max((d for qs in chunk.scanned or [] for d in qs), default=0))
    batch = encode_sessions(chunk.topics, chunk.results, chunk.qrels, depth=depth, scanned_to=chunk.scanned)
    scores = score_sessions(batch, params)
    # Figure 1: every query's sDCG by rank to top 100, the other options as in the run.
    by_query = score_sessions(batch, replace(params, top=QUERY_DEPTH, scan="fixed", short_lists="pad"))
    grid = session_grid(batch, params, b_values=run.grid_b, bq_values=run.grid_bq)
    grid_values = np.stack([getattr(grid, name) for name in SUMMARIES], axis=-1).astype(
        np.float32
    )  # (nb,nbq,S,5)
    extra = {}
    if run.measures:
        extra = score_measures(
            batch,
            run.measures,
            run_measure_params(run),
            trails=chunk.trails,
            keys=[row[0] for row in chunk.sessions],
        )

    n_sessions = len(chunk.sessions)
    segments = by_query.curve.reshape(n_sessions, -1, QUERY_DEPTH)
    before = np.concatenate([np.zeros((n_sessions, 1)), segments[:, :-1, -1]], axis=1)
    by_rank = (segments - before[:, :, None]).astype(np.float32)

    rows, query_rows = [], []
    for s, (session_id, participant_id, scenario_id, system_id, _, end_reason) in enumerate(chunk.sessions):
        length = int(scores.lengths[s])
        rows.append(
            SessionScore(
                run_id=run.pk,
                session_id=session_id,
                participant_id=participant_id,
                scenario_id=scenario_id,
                system_id=system_id,
                end_reason=end_reason,
                n_queries=int(scores.query_counts[s]),
                length=length,
                final=float(scores.final[s]),
                ideal_final=float(scores.ideal_final[s]),
                normalized_final=float(scores.normalized_final[s]),
                last_query=float(scores.last_query[s]),
                best_query=float(scores.best_query[s]),
                average=float(scores.average[s]),
                unjudged=not chunk.qrels.get(chunk.topics[s]),
                curve=scores.curve[s, :length].tobytes(),
                ideal=scores.ideal[s, :length].tobytes(),
                grid=np.ascontiguousarray(grid_values[:, :, s, :]).tobytes(),
                measures={name: float(values[s]) for name, values in extra.items()},
                pass_number=pass_number,
            )
        )
        per_query = scores.per_query_of(s)
        query_ids = chunk.query_ids[s]
        for position, query_id in enumerate(query_ids, start=1):
            query_rows.append(
                QueryScore(
                    run_id=run.pk,
                    session_id=session_id,
                    query_id=query_id,
                    position=position,
                    is_last=position == len(query_ids),
                    sdcg=float(per_query[position - 1]),
                    by_rank=by_rank[s, position - 1].tobytes(),
                )
            )
    return rows, query_rows


def stale_runs_requeue(*, stuck_after_minutes: int = 30) -> list[int]:
    """Queue a full pass of every run whose scoring is owed: a pass that could not be queued (NOT_QUEUED), stale
    with no pass begun since it was marked, never started, or running for longer than `stuck_after_minutes`
    (its tasks lost with a broker that restarted empty). Passes are idempotent, so queueing one twice costs
    time, not correctness. The assessment pools of those runs' studies are grown again too. Returns the ids of the runs queued (`manage.py requeue_stale_runs`,
    after a broker outage, or every REQUEUE_STALE_RUNS_SECONDS from the beat schedule)."""
    from studies.models import Scenario

    scoring_run_start_task = queueing.task_named("scoring.tasks.scoring_run_start_task")
    assessment_pools_grow_task = queueing.task_named("studies.tasks.assessment_pools_grow_task")
    stuck = timezone.now() - timedelta(minutes=stuck_after_minutes)
    owed = ScoringRun.objects.filter(
        Q(error__startswith=NOT_QUEUED)
        | Q(stale=True, started_at__isnull=True)
        | Q(stale=True, stale_since__gt=F("started_at"))
        | Q(status=ScoringRun.Status.PENDING, started_at__isnull=True)
        | Q(status=ScoringRun.Status.RUNNING, started_at__lt=stuck)
    ).order_by("pk")
    queued = [run.pk for run in owed if queueing.delay_or_log(scoring_run_start_task, run.pk, None)]
    studies = ScoringRun.objects.filter(pk__in=queued).values_list("study_id", flat=True).distinct()
    for study_id, scenario_id in Scenario.objects.filter(
        study_id__in=list(studies), assessment_pool__isnull=False
    ).values_list("study_id", "pk"):
        queueing.delay_or_log(assessment_pools_grow_task, study_id, scenario_id)
    return queued
