"""Reads for the scoring pages: a run's stored results as numpy arrays, filtered, in one query each."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from django.db.models import Count

from studies.models import Assignment
from studies.population import (
    DEFAULT,
    Population,
    PopulationError,
    in_population,
    population_from_query,
    population_q,
    population_stamp,
)
from studies.questionnaires.instruments import answers_with_scores

from .left_out import LeftOut
from .lib.session import SUMMARIES
from .models import QueryScore, ScoringRun, SessionScore

# The unit a chart or test averages over (docs/dashboards.md, "Averages"): sessions by default, as the paper's
# figures do; participants or scenarios average each one's sessions on a system first, and pair them.
UNITS = ("session", "participant", "scenario")
UNIT_PLURALS = {"session": "sessions", "participant": "participants", "scenario": "scenarios"}


class FilterError(ValueError):
    """A dashboard filter whose value names nothing in the study, or is malformed: answered with 400, never
    silently read as "no filter" (which would show the whole study under a filter's name)."""


@dataclass(frozen=True)
class ChartFilters:
    """The dashboard filters, by code (as the pages show them): systems, a scenario, a participant, the least
    number of queries; whether sessions on unjudged scenarios are included; the unit of averaging."""

    systems: tuple[str, ...] = ()
    scenario: str = ""
    participant: str = ""
    min_queries: int = 1
    include_unjudged: bool = False
    unit: str = "session"
    # The analysis population (studies/population.py; docs/dashboards.md, "Populations"): the study's default
    # or the query's (population, leave_out, and excluded=include|exclude for the agreement rule's marks).
    # `stamp` changes whenever a participant may have moved in or out (population_stamp), so a result cached
    # under these filters is not served after it.
    population: Population = DEFAULT
    stamp: tuple = ()
    exclusion_on: bool = False

    @property
    def include_excluded(self) -> bool:
        """Whether participants marked excluded (the agreement rule, a researcher) are counted."""
        return "excluded" not in self.population.leave_out

    @classmethod
    def from_query(cls, query, study, *, stamp: tuple | None = None) -> ChartFilters:
        """Read and check the filters of a query string against the study; FilterError names a bad one.
        `stamp`: the study's population stamp if the caller read it already (else one query reads it)."""

        def one(name):
            return (query.get(name) or "").strip()

        systems = tuple(sorted({v.strip() for v in query.getlist("system") if v.strip()}))
        if systems:
            known = set(study.systems.values_list("code", flat=True))
            for code in systems:
                if code not in known:
                    raise FilterError(
                        f"system {code!r} is not a system of this study ({', '.join(sorted(known))})"
                    )
        scenario = one("scenario")
        if scenario and not study.scenarios.filter(code=scenario).exists():
            raise FilterError(f"scenario {scenario!r} is not a scenario of this study")
        participant = one("participant")
        if participant and not study.participants.filter(code=participant).exists():
            raise FilterError(f"participant {participant[:40]!r} is not a participant of this study")
        min_queries = positive_int(query, "min_queries", 1)
        unjudged = one("unjudged") or "exclude"
        if unjudged not in ("exclude", "include"):
            raise FilterError(f"unjudged is exclude or include, not {unjudged[:40]!r}")
        unit = one("unit") or "session"
        if unit not in UNITS:
            raise FilterError(f"unit is one of {', '.join(UNITS)}, not {unit[:40]!r}")
        try:
            population = population_from_query(query, study)
        except PopulationError as exc:
            raise FilterError(str(exc)) from None
        return cls(
            systems=systems,
            scenario=scenario,
            participant=participant,
            min_queries=min_queries,
            include_unjudged=unjudged == "include",
            unit=unit,
            population=population,
            stamp=population_stamp(study) if stamp is None else tuple(stamp),
            exclusion_on=study.exclusion_min_agreement is not None,
        )

    def apply(self, queryset, prefix: str = ""):
        """The design filters (not the unjudged one: the readers count what it leaves out)."""
        if self.systems:
            queryset = queryset.filter(**{f"{prefix}system__code__in": self.systems})
        if self.scenario:
            queryset = queryset.filter(**{f"{prefix}scenario__code": self.scenario})
        if self.participant:
            queryset = queryset.filter(**{f"{prefix}participant__code": self.participant})
        if self.min_queries > 1:
            queryset = queryset.filter(**{f"{prefix}n_queries__gte": self.min_queries})
        return queryset


def positive_int(query, name: str, default: int) -> int:
    """A whole number >= 1 from the query string, `default` when absent; FilterError when malformed."""
    raw = (query.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise FilterError(f"{name} is a whole number, not {raw[:40]!r}") from None
    if value < 1:
        raise FilterError(f"{name} is at least 1, not {value}")
    return value


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
    left_out: LeftOut = LeftOut()

    def __len__(self) -> int:
        return len(self.session_id)


_COLUMNS = (
    "session_id",
    "participant__code",
    "scenario_id",
    "scenario__code",
    "system_id",
    "system__code",
    "end_reason",
    "n_queries",
    "length",
    *SUMMARIES,
    "unjudged",
    "in_population",
    "participant__excluded_at",
)
_UNJUDGED, _INSIDE, _MARKED = (
    _COLUMNS.index(c) for c in ("unjudged", "in_population", "participant__excluded_at")
)


def run_scores(
    run: ScoringRun, filters: ChartFilters | None = None, *, curves: bool = False, grid: bool = False
) -> RunScores:
    """The run's sessions in the filters' population as arrays (one query; the sessions outside it and those
    on unjudged scenarios are read in the same query and counted in `left_out`); curves and ideals as float64
    arrays of each session's own length if asked, the (b, bq) grid as an (S, nb, nbq, 5) array if asked."""
    columns = list(_COLUMNS) + (["curve", "ideal"] if curves else []) + (["grid"] if grid else [])
    filters = filters or ChartFilters()
    queryset = filters.apply(SessionScore.objects.filter(run=run)).annotate(
        in_population=in_population(filters.population, "participant__")
    )
    rows = list(
        queryset.order_by("system_id", "scenario_id", "participant__code", "session_id").values_list(*columns)
    )
    rows, outside, marked = _population_split(rows)
    # Sessions on unjudged scenarios are read in the same query and counted, not shown (unless asked for).
    left = [row for row in rows if row[_UNJUDGED]] if not filters.include_unjudged else []
    if left:
        rows = [row for row in rows if not row[_UNJUDGED]]
    left_out = LeftOut(
        len(left),
        tuple(sorted({row[3] for row in left})),
        **_excluded_counts(marked, 1, filters),
        **_population_counts(rows, outside, 1, filters),
    )
    n = len(rows)
    cols = list(zip(*rows, strict=True)) if rows else [()] * len(columns)
    base = len(_COLUMNS)
    summaries = {name: np.asarray(cols[9 + i], dtype=np.float64) for i, name in enumerate(SUMMARIES)}
    grid_array = None
    if grid:
        shape = (len(run.grid_b), len(run.grid_bq), len(SUMMARIES))
        grid_array = (
            np.frombuffer(b"".join(bytes(g) for g in cols[-1]), dtype=np.float32).reshape(n, *shape)
            if n
            else np.zeros((0, *shape), dtype=np.float32)
        )
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
        left_out=left_out,
    )


def _population_split(rows: list, *, inside: int = _INSIDE, marked: int = _MARKED):
    """(rows in the population, rows outside it, rows of participants marked excluded, in or out)."""
    kept = [row for row in rows if row[inside]]
    outside = [row for row in rows if not row[inside]] if len(kept) < len(rows) else []
    return kept, outside, [row for row in rows if row[marked] is not None]


def _excluded_counts(rows, at: int, filters: ChartFilters) -> dict:
    return {
        "excluded_sessions": len(rows),
        "excluded_participants": tuple(sorted({row[at] for row in rows})),
        "excluded_included": filters.include_excluded,
        "exclusion_on": filters.exclusion_on,
    }


def _population_counts(kept, outside, at: int, filters: ChartFilters) -> dict:
    return {
        "population": filters.population,
        "counted_sessions": len(kept),
        "counted_participants": len({row[at] for row in kept}),
        "population_sessions": len(outside),
        "population_participants": tuple(sorted({row[at] for row in outside})),
    }


@dataclass(frozen=True)
class QueryVectors:
    """Figure 1's data: each query's sDCG by rank to top 100 with its session's system, participant,
    scenario."""

    system: list[str]
    session_id: np.ndarray
    is_last: np.ndarray
    sdcg: np.ndarray
    by_rank: np.ndarray  # (Q, 100) float32
    participant: list[str] = field(default_factory=list)
    scenario: list[str] = field(default_factory=list)
    left_out: LeftOut = LeftOut()


def run_query_vectors(run: ScoringRun, filters: ChartFilters | None = None) -> QueryVectors:
    """Two queries: the filtered sessions of the run (with what the population and the unjudged filter leave
    out), then their query scores."""
    filters = filters or ChartFilters()
    sessions = filters.apply(SessionScore.objects.filter(run=run))
    rows = list(
        sessions.annotate(in_population=in_population(filters.population, "participant__")).values_list(
            "session_id",
            "participant__code",
            "system__code",
            "scenario__code",
            "unjudged",
            "in_population",
            "participant__excluded_at",
        )
    )
    inside, outside, marked = _population_split(rows, inside=5, marked=6)
    design = {}
    left = []
    kept_design = []
    for session_id, participant, system, scenario, unjudged, _inside, _marked in inside:
        if unjudged and not filters.include_unjudged:
            left.append(scenario)
        else:
            design[session_id] = (system, participant, scenario)
            kept_design.append((session_id, participant))
    left_out = LeftOut(
        len(left),
        tuple(sorted(set(left))),
        **_excluded_counts(marked, 1, filters),
        **_population_counts(kept_design, outside, 1, filters),
    )
    kept = sessions.filter(population_q(filters.population, "participant__"))
    if not filters.include_unjudged:
        kept = kept.filter(unjudged=False)
    rows = (
        list(
            QueryScore.objects.filter(run=run, session_id__in=kept.values("session_id"))
            .order_by("session_id", "position")
            .values_list("session_id", "is_last", "sdcg", "by_rank")
        )
        if design
        else []
    )
    if not rows:
        return QueryVectors(
            [],
            np.zeros(0, np.int64),
            np.zeros(0, bool),
            np.zeros(0),
            np.zeros((0, 100), np.float32),
            left_out=left_out,
        )
    session_ids, last, sdcg, by_rank = zip(*rows, strict=True)
    return QueryVectors(
        system=[design[s][0] for s in session_ids],
        session_id=np.asarray(session_ids, dtype=np.int64),
        is_last=np.asarray(last, dtype=bool),
        sdcg=np.asarray(sdcg, dtype=np.float64),
        by_rank=np.frombuffer(b"".join(bytes(v) for v in by_rank), dtype=np.float32).reshape(len(rows), -1),
        participant=[design[s][1] for s in session_ids],
        scenario=[design[s][2] for s in session_ids],
        left_out=left_out,
    )


@dataclass(frozen=True)
class PopulationAnswers:
    """Table 1's data: the questionnaire answers of the population's participants who gave any, with the
    systems (arms) each was assigned; the study's systems in order; and what the population left out."""

    answers: list[dict]
    systems: list[tuple[str, ...]]
    system_codes: list[str]
    left_out: LeftOut


def study_questionnaire_answers(study, filters: ChartFilters | None = None) -> PopulationAnswers:
    """The study's participants' questionnaire answers in the filters' population (one query, over their
    assignments: each participant's systems come with them), filtered to one participant if asked."""
    filters = filters or ChartFilters()
    assignments = Assignment.objects.filter(
        participant__study=study, participant__preview_at__isnull=True
    ).annotate(in_population=in_population(filters.population, "participant__"))
    if filters.participant:
        assignments = assignments.filter(participant__code=filters.participant)
    people: dict[str, list] = {}
    ids: dict[int, str] = {}  # the systems by id: the study's order
    for code, answers, inside, marked, system, system_id in assignments.order_by(
        "participant__enrolment_index", "position"
    ).values_list(
        "participant__code",
        "participant__questionnaire_answers",
        "in_population",
        "participant__excluded_at",
        "system__code",
        "system_id",
    ):
        ids[system_id] = system
        person = people.setdefault(code, [code, answers, inside, marked, []])
        if system not in person[4]:
            person[4].append(system)
    rows = list(people.values())
    inside, outside, marked = _population_split(rows, inside=2, marked=3)
    counts = _population_counts(inside, outside, 0, filters)
    answering = [row for row in inside if row[1]]
    unanswered = tuple(row[0] for row in inside if not row[1])
    left_out = LeftOut(applies=False, unanswered=unanswered, **_excluded_counts(marked, 0, filters), **counts)
    codes = [code for _, code in sorted(ids.items())]
    return PopulationAnswers(
        answers=[row[1] for row in answering],
        systems=[tuple(row[4]) for row in answering],
        system_codes=codes,
        left_out=left_out,
    )


def study_runs(study):
    return (
        ScoringRun.objects.filter(study=study)
        .select_related("reference_version", "created_by")
        .annotate(scored=Count("session_scores"))
    )


def run_progress_text(run: ScoringRun, scored: int | None = None) -> str:
    """What a run's status says. A pass is a full scoring or an incremental one (a live run re-scores only the
    sessions that changed), so the pass's own "done/total" is not the run's size: a finished run says how many
    sessions it holds, and how many its last update re-scored when that was fewer ("Done 1/1
    sessions" after one live session was re-scored while the run held 121). `scored`: the run's session
    scores, counted here if not given."""
    if scored is None:
        scored = SessionScore.objects.filter(run=run).count()
    partial = 0 < run.progress_total < scored
    if run.status == ScoringRun.Status.DONE:
        text = f"{scored} session{'s' if scored != 1 else ''} scored"
        return text + (f"; the last update re-scored {run.progress_total}" if partial else "")
    if run.status == ScoringRun.Status.RUNNING:
        if partial:
            return (
                f"updating: {run.progress_done}/{run.progress_total} changed sessions re-scored, of {scored}"
            )
        return f"{run.progress_done}/{run.progress_total} sessions scored"
    if run.status == ScoringRun.Status.PENDING:
        return "waiting for a worker"
    return f"{scored} session{'s' if scored != 1 else ''} scored before it stopped"


NUMERIC_KINDS = ("integer", "scale", "number", "float")


@dataclass(frozen=True)
class SessionExtras:
    """What the meta-evaluation reads beside the summaries, aligned with a RunScores' sessions: the run's
    other session measures (NaN where a session lacks one) and each numeric post-task rating (NaN: not
    answered)."""

    measures: dict[str, np.ndarray]
    ratings: dict[str, np.ndarray]
    rating_labels: dict[str, str]


def numeric_items(items) -> list[dict]:
    """The questionnaire items whose answers are numbers (the ratings a meta-evaluation can correlate)."""
    return [
        item
        for item in items or ()
        if isinstance(item, dict) and isinstance(item.get("name"), str) and item.get("kind") in NUMERIC_KINDS
    ]


def run_session_extras(run: ScoringRun, session_ids, items: list[dict]) -> SessionExtras:
    """One query: each session's post-task answers (SearchSession.post_task_answers) and, where the run has
    them, its other measures (SessionScore.measures; read only if the field exists, so this works on a
    database from before it). `items` is the study's post-task questionnaire; its numeric items are
    ratings."""
    has_measures = any(f.name == "measures" for f in SessionScore._meta.get_fields())
    columns = ["session_id", "session__post_task_answers"] + (["measures"] if has_measures else [])
    by_session = {row[0]: row for row in SessionScore.objects.filter(run=run).values_list(*columns)}
    rows = [by_session.get(int(s)) for s in session_ids]
    numeric = numeric_items(items)

    def number(value) -> float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return float(value) if ok else float("nan")

    # Each answer with its instrument scores (the raw NASA-TLX, SUS), which `items` may name as ratings.
    answers = [answers_with_scores(items, row[1]) if row else None for row in rows]
    ratings = {
        item["name"]: np.array(
            [number(a.get(item["name"])) if a is not None else np.nan for a in answers], dtype=np.float64
        )
        for item in numeric
    }
    measures: dict[str, np.ndarray] = {}
    if has_measures:
        names = list(getattr(run, "measures", None) or [])
        seen = {key for row in rows if row and isinstance(row[2], dict) for key in row[2]}
        names += sorted(seen - set(names))
        measures = {
            name: np.array(
                [number((row[2] or {}).get(name)) if row else np.nan for row in rows], dtype=np.float64
            )
            for name in names
        }
    return SessionExtras(
        measures, ratings, {item["name"]: item.get("label", item["name"]) for item in numeric}
    )


@dataclass(frozen=True)
class SessionAttention:
    """What was on screen and when the participant was away, per session of a run's scores, in
    the order of the scores: for the dashboards' "Attention and exposure" table."""

    duration_ms: np.ndarray  # 0 where the session has no end
    active_ms: np.ndarray
    spans: np.ndarray  # stretches away reported
    exposed: np.ndarray  # shown results reported on screen
    seen: np.ndarray  # of them, on screen for at least the threshold
    visible_ms: np.ndarray  # on screen in all
    scroll_permille: np.ndarray  # mean over the session's pages that reported one; NaN where none did


def run_session_attention(session_ids, *, seen_ms: int) -> SessionAttention:
    """The aggregates of studies' exposure and attention tables for these sessions (four queries)."""
    from studies.models import AttentionSpan, PageExposure, ResultExposure, SearchSession
    from studies.participation.events.exposure import AwaySpan, active_ms

    ids = [int(s) for s in session_ids]
    index = {s: i for i, s in enumerate(ids)}
    n = len(ids)
    duration = np.zeros(n, dtype=np.int64)
    for pk, started, ended in SearchSession.objects.filter(pk__in=ids).values_list(
        "pk", "started_at", "ended_at"
    ):
        if ended is not None:
            duration[index[pk]] = max(0, round((ended - started).total_seconds() * 1000))
    spans: dict[int, list] = {}
    for session_id, kind, start, length in AttentionSpan.objects.filter(session_id__in=ids).values_list(
        "session_id", "kind", "start_ms", "duration_ms"
    ):
        spans.setdefault(session_id, []).append(AwaySpan(kind, start, length))
    active = np.array(
        [active_ms(spans.get(s, []), int(duration[i])) for i, s in enumerate(ids)], dtype=np.int64
    )
    exposed, seen, visible = (np.zeros(n, dtype=np.int64) for _ in range(3))
    for session_id, ms in ResultExposure.objects.filter(shown_result__query__session_id__in=ids).values_list(
        "shown_result__query__session_id", "visible_ms"
    ):
        i = index[session_id]
        exposed[i] += 1
        seen[i] += ms >= seen_ms and ms > 0
        visible[i] += ms
    scrolls: dict[int, list[int]] = {}
    for session_id, depth in PageExposure.objects.filter(query__session_id__in=ids).values_list(
        "query__session_id", "scroll_permille"
    ):
        scrolls.setdefault(session_id, []).append(depth)
    scroll = np.array([np.mean(scrolls[s]) if s in scrolls else np.nan for s in ids], dtype=np.float64)
    counts = np.array([len(spans.get(s, [])) for s in ids], dtype=np.int64)
    return SessionAttention(duration, active, counts, exposed, seen, visible, scroll)
