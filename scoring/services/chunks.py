"""One chunk of a pass: load everything its sessions need in a handful of queries, then score it into
SessionScore and QueryScore rows (not yet saved: scoring_chunk_score upserts them)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from studies.models import (
    Event,
    Judgment,
    Query,
    ReferenceJudgment,
    ResultExposure,
    SearchSession,
    ShownResult,
)

from ..freshness import judgments_checksum
from ..lib.session import SUMMARIES, encode_sessions, score_sessions, session_grid
from ..lib.session_measures import TIME_MEASURES, TrailQuery, score_measures
from ..models import QUERY_DEPTH, QueryScore, ScoringRun, SessionScore
from .params import run_measure_params, run_params


@dataclass
class Chunk:
    sessions: list[tuple]  # (id, participant_id, scenario_id, system_id, topic_id, end_reason)
    query_ids: list[list[int]]
    results: list[list[list]]
    scanned: list[list[int]] | None
    topics: list[str]
    qrels: dict[str, dict[int, int]]
    trails: list[list[TrailQuery]] | None = None  # for the time measures
    # What each session was scored on (scoring/freshness.py): the run's reference version as this chunk read
    # it, or the checksum of each session's own judgments (session id -> checksum) on a participant run.
    reference_version_id: int | None = None
    checksums: dict[int, int] = field(default_factory=dict)


def chunk_load(run: ScoringRun, session_ids: Sequence[int]) -> Chunk:
    """Everything a chunk needs, in four or five queries whatever its size."""
    # Looked up by primary key first (the study is checked on the rows): SQLite's planner would otherwise
    # walk the whole study from its participants.
    rows = (
        SearchSession.objects.filter(
            pk__in=list(session_ids),
            ended_at__isnull=False,
            assignment__participant__preview_at__isnull=True,
            assignment__scenario__practice=False,  # a practice task is never scored
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
    observed = run.scan in ("observed", "exposure")
    timed = any(name in TIME_MEASURES for name in run.measures or ())
    deepest = {}
    if (run.scan == "observed") or timed:
        deepest = _observed_depths(ids, queries, marks)
    scan_depths = _exposed_depths(queries, run.scan_min_visible_ms) if run.scan == "exposure" else deepest
    depth = max(run.top, QUERY_DEPTH, max(deepest.values(), default=0), max(scan_depths.values(), default=0))
    shown: defaultdict[int, dict[int, int]] = defaultdict(dict)  # query -> rank -> document
    for query_id, rank, document_id in ShownResult.objects.filter(
        query__session_id__in=ids, rank__lte=depth
    ).values_list("query_id", "rank", "document_id"):
        shown[query_id][rank] = document_id

    def ranked(query_id):
        by_rank = shown.get(query_id, {})
        # A gap (a page never fetched) is an unjudged, never-repeated cell: gain 0.
        return [by_rank.get(rank, ("gap", query_id, rank)) for rank in range(1, max(by_rank, default=0) + 1)]

    results = [[ranked(q) for q in queries[s]] for s in ids]
    scanned = [[scan_depths.get(q, run.top) for q in queries[s]] for s in ids] if observed else None
    qrels: dict[str, dict[int, int]] = defaultdict(dict)
    checksums: dict[int, int] = {}
    if run.judgments == ScoringRun.Judgments.PARTICIPANT:
        # Each session is scored against its participant's own grades in that session.
        topics = [f"{row[4]}|{row[0]}" for row in sessions]
        pairs = defaultdict(list)
        for session_id, topic, document_id, grade in Judgment.objects.filter(session_id__in=ids).values_list(
            "session_id", "session__assignment__scenario__topic_id", "document_id", "grade"
        ):
            qrels[f"{topic}|{session_id}"][document_id] = grade
            pairs[session_id].append((document_id, grade))
        checksums = {session_id: judgments_checksum(pairs.get(session_id, ())) for session_id in ids}
    else:
        topics = [row[4] for row in sessions]
        for topic, document_id, grade in ReferenceJudgment.objects.filter(
            version_id=run.reference_version_id, topic_id__in=set(topics)
        ).values_list("topic_id", "document_id", "grade"):
            qrels[topic][document_id] = grade
    trails = session_trails(ids, queries, deepest) if timed else None
    version = run.reference_version_id if run.judgments == ScoringRun.Judgments.REFERENCE else None
    return Chunk(
        sessions, [queries[s] for s in ids], results, scanned, topics, dict(qrels), trails, version, checksums
    )


def session_trails(
    ids: list[int], queries: dict[int, list[int]], deepest: dict[int, int]
) -> list[list[TrailQuery]]:
    """Each session's trail for the time measures (docs/scoring-sessions.md, "Time-biased gain").

    A query starts at its issued_at less the session's started_at: both are the server's clock, so no client
    clock enters the difference. Its depth is the observed one (scan mark or deepest document opened), else
    the top X. Opened documents are those of acknowledged document_open or document_close events, at the rank
    they were first shown in that query's list; a document's dwell is the sum of the dwell_ms its closes
    report (a duration measured on the participant's clock, so its offset cancels), None when no close says
    it. Clicks are always logged here, so a query with none opened has an empty `opened`, not an unknown
    one."""
    started = dict(SearchSession.objects.filter(pk__in=ids).values_list("pk", "started_at"))
    issued = dict(Query.objects.filter(session_id__in=ids).values_list("pk", "issued_at"))
    # Looked up by the position an event's JSON gives, which may be anything: hence the object.
    positions: dict[tuple[int, object], int] = {
        (s, p): q for s, qs in queries.items() for p, q in enumerate(qs, start=1)
    }
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
    by_query: defaultdict[int, dict[int, float | None]] = defaultdict(dict)  # query -> rank -> dwell
    for (query_id, doc), rank in rank_of.items():
        by_query[query_id][rank] = dwell.get((query_id, doc))
    reached = _reached(queries, issued)
    return [
        [
            TrailQuery(
                start=max(0.0, (issued[q] - started[s]).total_seconds()),
                depth=deepest.get(q),
                opened=by_query.get(q, {}),
                reached=reached.get(q),
            )
            for q in queries[s]
        ]
        for s in ids
    ]


def _reached(queries: dict[int, list[int]], issued: dict) -> dict[int, dict[int, float]]:
    """query -> rank -> seconds after the query was issued when the result was first on the participant's
    screen (ResultExposure.first_visible_ms after its page was shown), for the time measures; none
    for a query with no exposure reported."""
    query_ids = [q for qs in queries.values() for q in qs]
    reached: defaultdict[int, dict[int, float]] = defaultdict(dict)
    for query_id, rank, shown_at, first_ms in ResultExposure.objects.filter(
        shown_result__query_id__in=query_ids, first_visible_ms__isnull=False
    ).values_list(
        "shown_result__query_id", "shown_result__rank", "shown_result__shown_at", "first_visible_ms"
    ):
        if first_ms is None:  # filtered out above; the type checker cannot know
            continue
        page_after = max(0.0, (shown_at - issued[query_id]).total_seconds())
        reached[query_id][rank] = page_after + first_ms / 1000.0
    return dict(reached)


def _exposed_depths(queries: dict[int, list[int]], min_visible_ms: int) -> dict[int, int]:
    """Each query's scan depth measured on screen: the deepest rank at least half visible for
    `min_visible_ms` in all (studies ResultExposure), 0 when the page reported results on screen but none that
    long; queries with no exposure at all (a study that does not record it) are left out, as _observed_depths
    leaves out queries with neither mark nor open, and take the run's top X."""
    query_ids = [q for qs in queries.values() for q in qs]
    depths: dict[int, int] = {}
    for query_id, rank, visible_ms in ResultExposure.objects.filter(
        shown_result__query_id__in=query_ids
    ).values_list("shown_result__query_id", "shown_result__rank", "visible_ms"):
        seen = rank if visible_ms >= min_visible_ms and visible_ms > 0 else 0
        depths[query_id] = max(seen, depths.get(query_id, 0))
    return depths


def _observed_depths(
    ids: list[int], queries: dict[int, list[int]], marks: dict[int, int | None]
) -> dict[int, int]:
    """Each query's observed scan depth, "the deepest rank they viewed or marked": its scan mark, or the
    deepest rank of a document opened from its list, whichever is deeper (queries with neither are left out).

    An open event stores {"data": {"doc", "query" (position), "rank"}, "ack": {...}}. Only acknowledged opens
    count, and the rank is the one the document was shown at in that query's list (ShownResult), not the
    client's word for it: a forged rank would otherwise set the depth of every array of the chunk."""
    # Looked up by the position an event's JSON gives, which may be anything: hence the object.
    positions: dict[tuple[int, object], int] = {
        (s, p): q for s, qs in queries.items() for p, q in enumerate(qs, start=1)
    }
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


def chunk_score(run: ScoringRun, chunk: Chunk, pass_number: int):
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
    # Scored with curves=True (the default), so the curves are there.
    assert by_query.curve is not None and scores.curve is not None and scores.ideal is not None
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
                reference_version_id=chunk.reference_version_id,
                judgments_checksum=chunk.checksums.get(session_id),
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
