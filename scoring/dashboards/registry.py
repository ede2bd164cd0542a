"""The dashboards' charts by name: which exist (CHARTS, in page order), and how a chart's options (filters,
summary, scenario, systems) are read from the query string and turned into one of the builders of charts/
(CHART_BUILDERS). The views (views.py) only check access, cache and serialize."""

import dataclasses
import hashlib

import numpy as np
from django.core.cache import cache
from django.http import Http404

from studies.design.latin_square import WITHIN
from studies.design.orders import design_of
from studies.questionnaires.instruments import answers_with_scores, score_items
from studies.questionnaires.items import DEFAULT_POST_TASK_QUESTIONNAIRE, DEFAULT_QUESTIONNAIRE

from .. import selectors
from ..lib.meta_evaluation import COEFFICIENTS, meta_evaluate, unit_means
from ..lib.session import SUMMARIES
from ..lib.session_measures import MEASURE_LABELS
from ..lib.statistics import mixed_model
from . import charts

CHARTS = {
    "curves": "Figure 2: normalized session curves per system",
    "scenario": "Figure 3: a scenario's curves per system",
    "sessions": "Figure 4: individual sessions",
    "queries": "Figure 1: last query against earlier queries",
    "participants": "Table 1: participant features",
    "query-counts": "Table 2: sessions by number of queries",
    "attention": "Attention and exposure per system",
    "statistics": "Statistics between systems",
    "sensitivity": "Sensitivity to b and bq",
    "meta-evaluation": "Meta-evaluation: each measure against the participants' post-task ratings",
    "meta-rankings": "Meta-evaluation: the systems' rankings by each measure and rating (Kendall's tau)",
}


# Charts that carry no information below a number of systems: the page shows their title and this one line
# instead of drawing them (the chart's JSON and CSV still answer). Kendall's tau between two rankings of two
# systems is +1 or -1 whatever the data.
HIDDEN_BELOW_SYSTEMS = {
    "meta-rankings": (
        3,
        "Not drawn: with {n} system{s}, Kendall's tau between two rankings can only be +1 or -1; it says "
        "something from three systems on.",
    ),
}


def chart_hidden(name: str, n_systems: int) -> str:
    """Why the page does not draw chart `name` at this many systems, or "" when it does."""
    rule = HIDDEN_BELOW_SYSTEMS.get(name)
    if rule is None or n_systems >= rule[0]:
        return ""
    return rule[1].format(n=n_systems, s="" if n_systems == 1 else "s")


def _choice(query, name: str, choices, default):
    """A chart option from the query string: `default` when absent, FilterError when not one of `choices`."""
    value = (query.get(name) or "").strip()
    if not value:
        return default
    if value not in choices:
        raise selectors.FilterError(f"{name} {value[:40]!r} is not one of {', '.join(map(str, choices))}")
    return value


def chart_build(run, name, query, *, stamp: tuple | None = None) -> charts.Chart:
    """The chart, with its population, what it averages over and the sessions it left out said on it.
    FilterError for a filter or an option naming nothing in the study. `stamp`: the study's population stamp
    if the caller read it (studies.population.population_stamp)."""
    filters = selectors.ChartFilters.from_query(query, run.study, stamp=stamp)
    built, left_out = _chart_of(run, name, query, filters)
    # Figure 4 draws every session; Table 1 describes participants, not scores. The rest average the unit.
    averaged_over = {
        "sessions": "individual sessions (no average)",
        "participants": "participants (not scores)",
    }.get(name, selectors.UNIT_PLURALS[filters.unit])
    return charts.annotate(built, averaged_over=averaged_over, left_out=left_out or selectors.LeftOut())


# The charts whose legends and tables do not name systems (no query for the names).
# Figure 1 too: its cold read is at the query budget (tests/dashboards/test_chart_endpoints_query_counts.py).
NO_SYSTEM_NAMES = {"queries", "statistics", "sensitivity", "meta-evaluation", "meta-rankings"}


def _system_names(run) -> dict[str, str]:
    """{code: name} of the study's systems, in the order of their ids."""
    return dict(run.study.systems.order_by("id").values_list("code", "name"))


@dataclasses.dataclass(frozen=True)
class _Options:
    """What every chart builder below reads besides the run, the query string and the filters."""

    fixed: bool  # the run pads short lists and scans a fixed depth: the query axis is marked every top X
    unit: str
    names: dict[str, str] | None  # {code: name} of the study's systems; None for charts that name none
    summary: str


def _chart_of(run, name, query, filters):
    fixed = run.short_lists == "pad" and run.scan == "fixed"
    names = None if name in NO_SYSTEM_NAMES else _system_names(run)  # the legends name the systems
    summary = _choice(query, "summary", SUMMARIES, "normalized_final")
    options = _Options(fixed=fixed, unit=filters.unit, names=names, summary=summary)
    builder = CHART_BUILDERS.get(name)
    if builder is None:
        raise Http404("no such chart")
    return builder(run, query, filters, options)


def _curves(run, query, filters, options: _Options):
    scores = selectors.run_scores(run, filters, curves=True)
    chart = charts.curves_chart(
        scores, top=run.top, fixed=options.fixed, unit=options.unit, names=options.names
    )
    return chart, scores.left_out


def _one_scenario(run, filters):
    """The run's curves, and the scenario Figures 3 and 4 show with its sessions: the scenario filter's, or
    the first with scores."""
    scores = selectors.run_scores(run, filters, curves=True)
    scenarios = list(dict.fromkeys(scores.scenario))
    scenario = filters.scenario or (scenarios[0] if scenarios else "-")
    keep = np.asarray(scores.scenario) == scenario
    return scores, scenario, keep


def _scenario(run, query, filters, options: _Options):
    scores, scenario, keep = _one_scenario(run, filters)
    k = selectors.positive_int(query, "k", 4)
    subset = _subset(scores, keep)
    chart = charts.scenario_chart(
        subset,
        scenario=scenario,
        top=run.top,
        fixed=options.fixed,
        k=k,
        unit=options.unit,
        names=options.names,
    )
    return chart, scores.left_out


def _sessions(run, query, filters, options: _Options):
    scores, scenario, keep = _one_scenario(run, filters)
    subset = _subset(scores, keep)
    systems = list(options.names or {})  # the study's codes, in the order of the systems' ids
    system = _choice(query, "system_one", systems, "") or (filters.systems[0] if filters.systems else "")
    present = list(dict.fromkeys(subset.system))
    system = system or (present[0] if present else "-")
    subset = _subset(subset, np.asarray(subset.system) == system)
    chart = charts.sessions_chart(
        subset, scenario=scenario, system=system, top=run.top, fixed=options.fixed, names=options.names
    )
    return chart, scores.left_out


def _queries(run, query, filters, options: _Options):
    vectors = selectors.run_query_vectors(run, filters)
    return charts.queries_chart(vectors, unit=options.unit, names=options.names), vectors.left_out


def _participants(run, query, filters, options: _Options):
    items = run.study.questionnaire or DEFAULT_QUESTIONNAIRE
    found = selectors.study_questionnaire_answers(run.study, filters)
    # The raw NASA-TLX and SUS scores, as rows of their own, where the questionnaire holds the instrument.
    answers = [answers_with_scores(items, a) for a in found.answers]
    table = charts.participants_table(
        answers,
        [*items, *score_items(items)],
        found.systems,
        found.system_codes,
        names=options.names,
        in_population=found.left_out.counted_participants,
    )
    return table, found.left_out


def _query_counts(run, query, filters, options: _Options):
    scores = selectors.run_scores(run, filters)
    return charts.query_counts_table(scores, unit=options.unit, names=options.names), scores.left_out


def _attention(run, query, filters, options: _Options):
    scores = selectors.run_scores(run, filters)
    seen_ms = run.scan_min_visible_ms
    attention = selectors.run_session_attention(scores.session_id, seen_ms=seen_ms)
    return charts.attention_table(scores, attention, seen_ms=seen_ms, names=options.names), scores.left_out


def _statistics(run, query, filters, options: _Options):
    scores = selectors.run_scores(run, filters)
    summary = options.summary
    # The mixed model is fitted on the sessions whatever the unit: one fit serves the three.
    mixed = _cached(
        run,
        "mixed",
        dataclasses.replace(filters, unit="session"),
        lambda: (
            mixed_model(scores.summaries[summary], scores.system, scores.participant, scores.scenario)
            if len(scores)
            else None
        ),
        summary,
    )
    chart = charts.statistics_chart(
        scores, summary=summary, unit=options.unit, mixed=mixed, within=design_of(run.study) == WITHIN
    )
    return chart, scores.left_out


def _sensitivity(run, query, filters, options: _Options):
    scores = selectors.run_scores(run, filters, grid=True)
    codes = list(run.study.systems.order_by("id").values_list("code", flat=True))
    systems = list(dict.fromkeys(scores.system))
    first = _choice(query, "first", codes, "") or (systems[0] if systems else "-")
    others = [s for s in systems if s != first]
    second = _choice(query, "second", codes, "") or (others[0] if others else "-")
    chart = charts.sensitivity_chart(
        scores,
        grid_b=run.grid_b,
        grid_bq=run.grid_bq,
        summary=options.summary,
        first=first,
        second=second,
        b=run.b,
        bq=run.bq,
        unit=options.unit,
    )
    return chart, scores.left_out


def _meta_rankings(run, query, filters, options: _Options):
    scores = selectors.run_scores(run, filters)
    result, _ratings, labels = _meta_evaluation(run, scores, filters)
    return charts.meta_rankings_chart(result, labels=labels), scores.left_out


def _meta_correlations(run, query, filters, options: _Options):
    scores = selectors.run_scores(run, filters)
    result, ratings, labels = _meta_evaluation(run, scores, filters)
    rating_names = list(ratings) or ["-"]
    rating = _choice(query, "rating", rating_names, rating_names[0])
    coefficient = _choice(query, "coefficient", COEFFICIENTS, "pearson")
    chart = charts.meta_evaluation_chart(
        result,
        rating=rating,
        rating_label=ratings.get(rating, rating),
        coefficient=coefficient,
        labels=labels,
        unit=options.unit,
    )
    return chart, scores.left_out


# Each chart's builder by name (the names of CHARTS): it returns the chart and the sessions it left out.
CHART_BUILDERS = {
    "curves": _curves,
    "scenario": _scenario,
    "sessions": _sessions,
    "queries": _queries,
    "participants": _participants,
    "query-counts": _query_counts,
    "attention": _attention,
    "statistics": _statistics,
    "sensitivity": _sensitivity,
    "meta-evaluation": _meta_correlations,
    "meta-rankings": _meta_rankings,
}


def meta_evaluation_tables(run, query):
    """The meta-evaluation page's data: the result, the ratings' labels, every measure's label and the
    unjudged sessions left out. FilterError as chart_build."""
    filters = selectors.ChartFilters.from_query(query, run.study)
    scores = selectors.run_scores(run, filters)
    result, ratings, labels = _meta_evaluation(run, scores, filters)
    return result, ratings, labels, scores.left_out


def _cached(run, what: str, filters, compute, *extra):
    """A result of the run's stored scores cached under its generation and the filters that chose the
    sessions: the meta-evaluation is shared by its two charts, their CSV and its page; the mixed model by
    every unit."""
    digest = hashlib.sha1(repr((filters, *extra)).encode()).hexdigest()
    key = f"scoring:{what}:{run.pk}:{run.generation}:{digest}"
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, 24 * 3600)
    return value


def _meta_evaluation(run, scores, filters):
    return _cached(
        run,
        "meta",
        filters,
        lambda: _meta_compute(run, scores, filters.unit),
        run.study.post_task_questionnaire,
    )


ATTENTION_LABELS = {
    "active_s": "active time (s)",
    "results_seen_per_query": "results seen per query (on screen)",
}


def _attention_measures(run, scores) -> dict[str, np.ndarray]:
    """What the search page measured of each session, beside the scores in the meta-evaluation:
    active time, and results on screen for at least the run's scan_min_visible_ms per query. None when no
    session of these reported exposure or attention (a study that does not record them)."""
    attention = selectors.run_session_attention(scores.session_id, seen_ms=run.scan_min_visible_ms)
    if not (attention.exposed.any() or attention.spans.any()):
        return {}
    return {
        "active_s": attention.active_ms / 1000.0,
        "results_seen_per_query": attention.seen / np.maximum(scores.n_queries, 1),
    }


def _meta_compute(run, scores, unit):
    """The meta-evaluation of the filtered sessions: every measure the run has per session (the five stored
    summaries, and its other measures where it computed them) against every numeric post-task rating; on
    another unit than the session, each unit's sessions on a system are averaged first."""
    items = run.study.post_task_questionnaire or DEFAULT_POST_TASK_QUESTIONNAIRE
    # The raw NASA-TLX and SUS scores of each post-task answer are ratings too (run_session_extras).
    extras = selectors.run_session_extras(run, scores.session_id, [*items, *score_items(items)])
    measures = {**{name: scores.summaries[name] for name in SUMMARIES}, **extras.measures}
    measures.update(_attention_measures(run, scores))
    labels = {**charts.SUMMARY_LABELS, **MEASURE_LABELS, **ATTENTION_LABELS}
    labels.update({f"rating: {k}": f"rating “{v}”" for k, v in extras.rating_labels.items()})
    ratings, systems = extras.ratings, list(scores.system)
    if unit != "session":
        merged, systems = unit_means(
            {**measures, **{f"rating: {k}": v for k, v in ratings.items()}},
            systems,
            charts.unit_keys(scores, unit),
        )
        measures = {k: merged[k] for k in measures}
        ratings = {k: merged[f"rating: {k}"] for k in ratings}
    return meta_evaluate(measures, ratings, systems), extras.rating_labels, labels


def _subset(scores, keep):
    if keep is None:
        return scores
    index = keep.nonzero()[0]
    return selectors.RunScores(
        session_id=scores.session_id[index],
        participant=[scores.participant[i] for i in index],
        scenario_id=scores.scenario_id[index],
        scenario=[scores.scenario[i] for i in index],
        system_id=scores.system_id[index],
        system=[scores.system[i] for i in index],
        end_reason=[scores.end_reason[i] for i in index],
        n_queries=scores.n_queries[index],
        length=scores.length[index],
        summaries={k: v[index] for k, v in scores.summaries.items()},
        curves=None if scores.curves is None else [scores.curves[i] for i in index],
        ideals=None if scores.ideals is None else [scores.ideals[i] for i in index],
        grid=None if scores.grid is None else scores.grid[index],
        left_out=scores.left_out,
    )


def drawn_charts(n_systems: int) -> list[str]:
    """The charts the dashboard draws at this many systems (CHARTS' order)."""
    return [name for name in CHARTS if not chart_hidden(name, n_systems)]
