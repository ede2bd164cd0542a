"""Reads for the scoring pages: a run's stored results as numpy arrays, filtered, in one query each."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from studies.models import Participant

from .models import QueryScore, ScoringRun, SessionScore
from .session import SUMMARIES


@dataclass(frozen=True)
class ChartFilters:
    """The dashboard filters. Unknown or malformed values are ignored rather than refused: a filter is a view."""

    systems: tuple[int, ...] = ()
    scenario: int | None = None
    participant: str = ""
    min_queries: int = 1

    @classmethod
    def from_query(cls, query) -> ChartFilters:
        def as_int(value):
            try:
                return int(value)
            except (TypeError, ValueError):
                return None

        systems = tuple(sorted({v for v in (as_int(s) for s in query.getlist("system")) if v is not None}))
        return cls(
            systems=systems,
            scenario=as_int(query.get("scenario")),
            participant=(query.get("participant") or "").strip()[:40],
            min_queries=max(1, as_int(query.get("min_queries")) or 1),
        )

    def key(self) -> str:
        return f"s{','.join(map(str, self.systems))}|c{self.scenario}|p{self.participant}|q{self.min_queries}"

    def apply(self, queryset, prefix: str = ""):
        if self.systems:
            queryset = queryset.filter(**{f"{prefix}system_id__in": self.systems})
        if self.scenario is not None:
            queryset = queryset.filter(**{f"{prefix}scenario_id": self.scenario})
        if self.participant:
            queryset = queryset.filter(**{f"{prefix}participant__code": self.participant})
        if self.min_queries > 1:
            queryset = queryset.filter(**{f"{prefix}n_queries__gte": self.min_queries})
        return queryset


@dataclass(frozen=True)
class RunScores:
    """A run's per-session results, one entry per session, ordered by system, scenario, participant."""

    session_id: np.ndarray
    participant: list[str]
    scenario_id: np.ndarray
    scenario: list[str]
    system_id: np.ndarray
    system: list[str]
    end_reason: list[str]
    n_queries: np.ndarray
    length: np.ndarray
    summaries: dict[str, np.ndarray]
    curves: list[np.ndarray] | None
    ideals: list[np.ndarray] | None
    grid: np.ndarray | None  # (S, nb, nbq, 5 summaries)

    def __len__(self) -> int:
        return len(self.session_id)


_COLUMNS = ("session_id", "participant__code", "scenario_id", "scenario__code", "system_id", "system__code",
            "end_reason", "n_queries", "length", *SUMMARIES)


def run_scores(run: ScoringRun, filters: ChartFilters | None = None, *, curves: bool = False,
               grid: bool = False) -> RunScores:
    """The run's sessions as arrays (one query); curves and ideals as float64 arrays of each session's own
    length if asked, the (b, bq) grid as an (S, nb, nbq, 5) array if asked."""
    columns = list(_COLUMNS) + (["curve", "ideal"] if curves else []) + (["grid"] if grid else [])
    queryset = (filters or ChartFilters()).apply(SessionScore.objects.filter(run=run))
    rows = list(queryset.order_by("system_id", "scenario_id", "participant__code", "session_id").values_list(*columns))
    n = len(rows)
    cols = list(zip(*rows, strict=True)) if rows else [()] * len(columns)
    base = len(_COLUMNS)
    summaries = {name: np.asarray(cols[9 + i], dtype=np.float64) for i, name in enumerate(SUMMARIES)}
    grid_array = None
    if grid:
        shape = (len(run.grid_b), len(run.grid_bq), len(SUMMARIES))
        grid_array = (np.frombuffer(b"".join(bytes(g) for g in cols[-1]), dtype=np.float32).reshape(n, *shape)
                      if n else np.zeros((0, *shape), dtype=np.float32))
    return RunScores(
        session_id=np.asarray(cols[0], dtype=np.int64),
        participant=list(cols[1]),
        scenario_id=np.asarray(cols[2], dtype=np.int64),
        scenario=list(cols[3]),
        system_id=np.asarray(cols[4], dtype=np.int64),
        system=list(cols[5]),
        end_reason=list(cols[6]),
        n_queries=np.asarray(cols[7], dtype=np.int64),
        length=np.asarray(cols[8], dtype=np.int64),
        summaries=summaries,
        curves=[np.frombuffer(bytes(c), dtype=np.float64) for c in cols[base]] if curves else None,
        ideals=[np.frombuffer(bytes(c), dtype=np.float64) for c in cols[base + 1]] if curves else None,
        grid=grid_array,
    )


@dataclass(frozen=True)
class QueryVectors:
    """Figure 1's data: each query's sDCG by rank to top 100 with its session's system."""

    system: list[str]
    session_id: np.ndarray
    is_last: np.ndarray
    sdcg: np.ndarray
    by_rank: np.ndarray  # (Q, 100) float32


def run_query_vectors(run: ScoringRun, filters: ChartFilters | None = None) -> QueryVectors:
    """One query: the run's query scores of the filtered sessions, joined to their system through the session
    score of the same run."""
    sessions = (filters or ChartFilters()).apply(SessionScore.objects.filter(run=run))
    rows = list(
        QueryScore.objects.filter(run=run, session_id__in=sessions.values("session_id"))
        .order_by("session_id", "position")
        .values_list("session_id", "is_last", "sdcg", "by_rank")
    )
    system_of = dict(sessions.values_list("session_id", "system__code")) if rows else {}
    if not rows:
        return QueryVectors([], np.zeros(0, np.int64), np.zeros(0, bool), np.zeros(0), np.zeros((0, 100), np.float32))
    session_ids, last, sdcg, by_rank = zip(*rows, strict=True)
    return QueryVectors(
        system=[system_of[s] for s in session_ids],
        session_id=np.asarray(session_ids, dtype=np.int64),
        is_last=np.asarray(last, dtype=bool),
        sdcg=np.asarray(sdcg, dtype=np.float64),
        by_rank=np.frombuffer(b"".join(bytes(v) for v in by_rank), dtype=np.float32).reshape(len(rows), -1),
    )


def study_questionnaire_answers(study, filters: ChartFilters | None = None) -> list[dict]:
    """Questionnaire answers of the study's participants (one query), filtered to one participant if asked."""
    participants = Participant.objects.filter(study=study).exclude(questionnaire_answers={})
    if filters and filters.participant:
        participants = participants.filter(code=filters.participant)
    return list(participants.values_list("questionnaire_answers", flat=True))


def study_runs(study):
    return ScoringRun.objects.filter(study=study).select_related("reference_version", "created_by")
