"""Scoring pages: runs (create, progress, default), dashboards, one JSON (and CSV) endpoint per chart (the
charts are named in registry.py, built in charts/).

Thin: an access-checked fetch (404 for a study the researcher cannot see), a service or a chart builder,
a response. Chart JSON is cached under the run's generation, which every finished pass bumps.
"""

import csv
import hashlib

from django import forms
from django.contrib import messages
from django.core.cache import cache
from django.http import Http404, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import escape
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from sessionlab.spreadsheet import safe_rows
from studies.accounts.access import researcher_required, study_for_researcher
from studies.design.services import study_update
from studies.population import (
    BASES,
    LEAVE_OUTS,
    Population,
    PopulationError,
    population_stamp_columns,
    stamp_of,
    study_population,
)
from studies.questionnaires.instruments import score_items
from studies.questionnaires.items import DEFAULT_POST_TASK_QUESTIONNAIRE

from .. import selectors, services
from ..freshness import run_freshness, run_settled, runs_freshness
from ..lib.meta_evaluation import COEFFICIENT_LABELS, COEFFICIENTS
from ..lib.session import DUPLICATES, FORMULATIONS, SCANS, SHORT_LISTS, SUMMARIES, default_weights
from ..lib.session_measures import MEASURE_LABELS, MEASURES
from ..models import ScoringRun
from . import charts
from .charts.common import number_text
from .registry import CHARTS, chart_build, chart_hidden, meta_evaluation_tables

CACHE_SECONDS = 24 * 3600


# The options in plain words, with the paper's term (the value the API and the command line take) beside them
# ("b, bq, 2008/2002/log2/kanoulas2011, pad/as_is" meant nothing to a new researcher).
FORMULATION_WORDS = {
    "2008": "Session DCG of the paper (Järvelin et al., ECIR 2008)",
    "2002": "DCG as first defined: no discount before rank b (Järvelin & Kekäläinen 2002)",
    "log2": "Discount by log2 of the rank, as trec_eval's nDCG",
    "kanoulas2011": "Session Track form: gain 2^grade − 1, weights ignored (Kanoulas et al., SIGIR 2011)",
}
GAIN_WORDS = {"linear": "The weights above", "exponential": "2^grade − 1, whatever the weights"}
DUPLICATE_WORDS = {
    "every": "Counts every time it is shown",
    "first": "Counts only the first time it is shown",
}
SHORT_LIST_WORDS = {
    "pad": "Filled up to X with results worth nothing",
    "as_is": "Kept as short as it was, and its ideal cut the same",
}
SCAN_WORDS = {
    "fixed": "Everyone looked at the top X",
    "observed": "As deep as each participant went (documents opened, “I stopped scanning here”)",
    "exposure": "As deep as results stayed on each participant's screen (measured by the page)",
}


def _choices(values, words):
    return [(value, f"{words.get(value, value)} ({value})") for value in values]


def _doc_link(section: str, text: str = "more") -> str:
    url = reverse("doc_page", args=["scoring-sessions"])
    return f' <a href="{url}#{section}" target="_blank" rel="noopener">{text}</a>'


class RunForm(forms.Form):
    label = forms.CharField(
        max_length=200,
        required=False,
        label="Name of the run (optional)",
        help_text="Shown in the list of runs, e.g. “impatient searchers”.",
    )
    weights = forms.CharField(label="Value of each grade (weights)")
    b = forms.FloatField(initial=2.0, label="Patience down a result list (b, the rank's log base)")
    bq = forms.FloatField(initial=4.0, label="Patience across queries (bq, the query's log base)")
    top = forms.IntegerField(
        initial=10, min_value=1, max_value=1000, label="Results looked at per query (top X)"
    )
    formulation = forms.ChoiceField(
        choices=_choices(FORMULATIONS, FORMULATION_WORDS), initial="2008", label="Formula (formulation)"
    )
    gain = forms.ChoiceField(
        choices=_choices(ScoringRun.Gain.values, GAIN_WORDS),
        initial="linear",
        label="What a relevant document is worth (gain)",
    )
    duplicates = forms.ChoiceField(
        choices=_choices(DUPLICATES, DUPLICATE_WORDS),
        initial="every",
        label="A document shown again by a later query (duplicates)",
    )
    short_lists = forms.ChoiceField(
        choices=_choices(SHORT_LISTS, SHORT_LIST_WORDS),
        initial="pad",
        label="A query with fewer than X results (short lists)",
    )
    scan = forms.ChoiceField(
        choices=_choices(SCANS, SCAN_WORDS),
        initial="fixed",
        label="How deep each result list was looked at (scan depth)",
    )
    scan_min_visible_ms = forms.IntegerField(
        initial=1000,
        min_value=0,
        max_value=600_000,
        required=False,
        label="On screen for at least (ms), for the measured scan depth",
    )
    judgments = forms.ChoiceField(
        choices=ScoringRun.Judgments.choices,
        initial="reference",
        label="Whose relevance judgments (judgments)",
    )
    measures = forms.MultipleChoiceField(
        choices=[(name, MEASURE_LABELS[name]) for name in MEASURES],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Also compute",
    )
    make_default = forms.BooleanField(
        required=False,
        label="Make it the study's default (live) run",
        help_text="The live run is re-scored as participants finish sessions.",
    )

    def clean_scan_min_visible_ms(self):
        value = self.cleaned_data.get("scan_min_visible_ms")
        return 1000 if value is None else value  # left empty: the default

    def __init__(self, *args, study, **kwargs):
        super().__init__(*args, **kwargs)
        # Help that links to the served docs (sessionlab/docs_views.py), not to a path in the repository.
        helps = {
            "b": "How fast a result loses value with its rank: 2 is an impatient searcher, 10 a patient one; "
            "above 1." + _doc_link("formulations"),
            "bq": "How fast a later query's results lose value: 4 in the paper; between 1 and 1000."
            + _doc_link("formulations"),
            "top": "The depth each query's results are scored to (10: the first page).",
            "formulation": "Which definition of session DCG." + _doc_link("formulations", "the formulas"),
            "gain": "Exponential is the Session Track's habit; the paper uses the weights."
            + _doc_link("grades"),
            "duplicates": "Whether a document seen before still adds value."
            + _doc_link("the-choices-behind-the-options"),
            "short_lists": "Padding compares every query with a full list of X."
            + _doc_link("the-choices-behind-the-options"),
            "scan": "Observed depth needs opened documents or “stopped here” marks; the depth measured on "
            "screen needs the study to record exposure." + _doc_link("the-choices-behind-the-options"),
            "judgments": "Reference judgments come from expert assessment or imported qrels.",
            "measures": "Other session measures, stored per session beside sDCG."
            + _doc_link("other-session-measures", "what each one is"),
        }
        for name, text in helps.items():
            self.fields[name].help_text = mark_safe(text)  # noqa: S308 (our own text and URLs)
        # The default weights follow the study's grade scale (session.default_weights); the help says which
        # grade gets which weight, so a scale of 0..4 is not met with the paper's four weights.
        self.grade_weights = grade_weights(study)
        self.fields["weights"].initial = ",".join(f"{w:g}" for _, _, w in self.grade_weights)
        self.fields["weights"].help_text = (
            "What each grade is worth, in order, separated by commas; this study's default: "
            + "; ".join(f"{value} ({escape(label)}) = {w:g}" for value, label, w in self.grade_weights)
            + ". Each grade above the lowest is worth ten times the one below "
            "(the paper's 0,1,10,100 on 0..3)." + _doc_link("grades")
        )

    def clean_weights(self):
        try:
            return [float(w) for w in self.cleaned_data["weights"].split(",")]
        except ValueError:
            raise forms.ValidationError("weights are numbers separated by commas, e.g. 0,1,10,100") from None


def grade_weights(study) -> list[tuple[int, str, float]]:
    """(grade, label, default weight) for every grade 0..max of the study's scale."""
    labels = dict(study.grade_levels.values_list("value", "label"))
    weights = default_weights(list(labels))
    return [(grade, labels.get(grade, "not on the scale"), w) for grade, w in enumerate(weights)]


def run_for(request, slug, run_id):
    study = study_for_researcher(request, slug)
    return get_object_or_404(
        ScoringRun.objects.select_related("study", "reference_version"), pk=run_id, study=study
    )


@researcher_required
def runs(request, slug):
    study = study_for_researcher(request, slug)
    form = RunForm(request.POST or None, study=study)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        make_default = data.pop("make_default") or None
        try:
            run = services.scoring_run_create(
                study=study, created_by=request.user, make_default=make_default, **data
            )
        except services.ScoringError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, "Scoring run created; it is being scored.")
            return redirect("scoring:run_detail", slug=study.slug, run_id=run.pk)
    runs = list(selectors.study_runs(study))
    freshness = runs_freshness(study, runs)
    for run in runs:
        run.freshness = freshness[run.pk]  # decided now, never the remembered flag (scoring/freshness.py)
    return render(
        request,
        "scoring/runs.html",
        {"study": study, "form": form, "runs": runs},
    )


@researcher_required
def run_detail(request, slug, run_id):
    run = run_for(request, slug, run_id)
    try:
        context = dashboard_context(request, run)
    except selectors.FilterError as exc:
        return HttpResponseBadRequest(f"Bad filter: {exc}", content_type="text/plain; charset=utf-8")
    return render(request, "scoring/run_detail.html", context)


@researcher_required
def compare(request, slug):
    study = study_for_researcher(request, slug)
    all_runs = list(selectors.study_runs(study))
    by_id = {str(r.pk): r for r in all_runs}
    left, right = by_id.get(request.GET.get("left", "")), by_id.get(request.GET.get("right", ""))
    if left is None or right is None:
        left, right = (all_runs[1], all_runs[0]) if len(all_runs) >= 2 else (None, None)
    context = {"study": study, "runs": all_runs, "left": left, "right": right}
    if left and right:
        try:
            context["columns"] = [dashboard_context(request, left), dashboard_context(request, right)]
        except selectors.FilterError as exc:
            return HttpResponseBadRequest(f"Bad filter: {exc}", content_type="text/plain; charset=utf-8")
    return render(request, "scoring/compare.html", context)


@researcher_required
@require_POST
def run_make_default(request, slug, run_id):
    run = run_for(request, slug, run_id)
    services.scoring_run_make_default(run=run)
    freshness = run_freshness(run)
    messages.success(
        request,
        f"Run {run.pk} is now the study's default run"
        + (
            "."
            if freshness.current
            else f"; it is being brought up to date ({'; '.join(freshness.reasons)})."
        ),
    )
    return redirect("scoring:runs", slug=slug)


@researcher_required
def run_status(request, slug, run_id):
    run = run_for(request, slug, run_id)
    scored = run.session_scores.count()
    freshness = run_freshness(run)
    return JsonResponse(
        {
            "status": run.status,
            "status_text": freshness.status_text,  # what the page shows, decided now (scoring/freshness.py)
            "done": run.progress_done,
            "total": run.progress_total,
            # Decided now (scoring/freshness.py), not ScoringRun.stale, the re-score queue's mark.
            "stale": freshness.stale,
            "current": freshness.current,
            "reasons": list(freshness.reasons),
            "error": run.error,
            # Nothing more to follow: done and current, or no re-score coming (freshness.run_settled).
            "finished": run_settled(run, freshness),
            "scored": scored,
            "text": selectors.run_progress_text(run, scored),  # the run, not only its last pass
        }
    )


# --- charts -------------------------------------------------------------------------------------------------


def dashboard_context(request, run):
    """The dashboard of a run; FilterError (a filter naming nothing in the study) is the caller's 400."""
    study = run.study
    filters = selectors.ChartFilters.from_query(request.GET, study)
    query = request.GET.urlencode()
    systems = list(study.systems.order_by("id"))
    n_systems = len(filters.systems) or len(systems)  # the systems the filters keep
    chart_urls = [
        (
            name,
            title,
            f"{_chart_url(run, name, 'json')}?{query}",
            f"{_chart_url(run, name, 'csv')}?{query}",
            chart_hidden(name, n_systems),
        )
        for name, title in CHARTS.items()
    ]
    freshness = run_freshness(run)
    left_out = selectors.run_scores(run, filters).left_out if run.is_finished or run.progress_done else None
    return {
        "run": run,
        "freshness": freshness,
        "run_settled": run_settled(run, freshness),
        "study": study,
        "filters": filters,
        "chart_urls": chart_urls,
        "run_progress": selectors.run_progress_text(run),
        "scenarios": study.scenarios.filter(practice=False).order_by("id"),  # a practice task has no scores
        "systems": systems,
        "summaries": [(s, charts.SUMMARY_LABELS[s]) for s in SUMMARIES],
        "units": [(u, selectors.UNIT_PLURALS[u]) for u in selectors.UNITS],
        "left_out": left_out,
        "population_key": left_out.page_key(selectors.UNIT_PLURALS[filters.unit]) if left_out else "",
        "params": {
            key: request.GET.get(key, "")
            for key in ("k", "summary", "first", "second", "system_one", "rating", "coefficient")
        },
        "ratings": _ratings(study.post_task_questionnaire or DEFAULT_POST_TASK_QUESTIONNAIRE),
        "coefficients": [(c, COEFFICIENT_LABELS[c]) for c in COEFFICIENTS],
        "study_population": study_population(study),
        "population_bases": list(BASES.items()),
        "population_leave_outs": list(LEAVE_OUTS.items()),
    }


def _ratings(items) -> list[dict]:
    """The post-task ratings a chart may be asked for: the numeric items, then the instrument scores."""
    return [*selectors.numeric_items(items), *score_items(items)]


@researcher_required
@require_POST
def population_default(request, slug):
    """Make a population the study's default (Study.analysis_population): every chart, test, plan and
    download that does not ask for another counts it. A bad one is a 400 naming it; nothing changes."""
    study = study_for_researcher(request, slug)
    try:
        population = Population.parse(request.POST.get("population", ""))
    except PopulationError as exc:
        return HttpResponseBadRequest(f"Bad population: {exc}", content_type="text/plain; charset=utf-8")
    study_update(study=study, analysis_population=population.code())
    messages.success(request, f"The study's analysis population is now {population.label()}.")
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = reverse("scoring:runs", args=[study.slug])
    return redirect(target)


@researcher_required
def meta_evaluation(request, slug, run_id):
    """Every measure against every post-task rating, as tables (overall and per system, both coefficients),
    and the systems' rankings; cached like the charts under the run's generation."""
    run = run_for(request, slug, run_id)
    try:
        context = dashboard_context(request, run)
    except selectors.FilterError as exc:
        return HttpResponseBadRequest(f"Bad filter: {exc}", content_type="text/plain; charset=utf-8")
    result, ratings, labels, left_out = meta_evaluation_tables(
        run, request.GET
    )  # cached under the generation
    by_row: dict = {}
    for a in result.correlations:
        by_row.setdefault((a.rating, a.scope, a.measure), {})[a.coefficient] = a
    sections = [
        {
            "rating": rating,
            "label": label,
            "rows": [
                {
                    "scope": scope,
                    "measure": measure,
                    "label": labels.get(measure, measure),
                    "n": next(iter(cells.values())).n,
                    "cells": [_correlation_cells(cells[c]) for c in COEFFICIENTS],
                }
                for (r, scope, measure), cells in by_row.items()
                if r == rating
            ],
        }
        for rating, label in ratings.items()
    ]
    rankers = list(result.system_means)
    systems = list(next(iter(result.system_means.values()), {}))
    rankings = [
        (r.first, r.second, _number(r.tau, 3), _number(r.p_value, 4), r.systems) for r in result.rankings
    ]
    context.update(
        {
            "sections": sections,
            "notes": result.notes,
            "rankings": rankings,
            "ranked_systems": systems,
            "system_means": [
                (name, labels.get(name, name), [_number(result.system_means[name][s], 4) for s in systems])
                for name in rankers
            ],
            "left_out": left_out,
            "charts": [
                (
                    name,
                    CHARTS[name],
                    f"{_chart_url(run, name, 'json')}?{request.GET.urlencode()}",
                    f"{_chart_url(run, name, 'csv')}?{request.GET.urlencode()}",
                )
                for name in ("meta-evaluation", "meta-rankings")
            ],
        }
    )
    return render(request, "scoring/meta_evaluation.html", context)


def _number(value, digits: int) -> str:
    """A figure as the page shows it: `digits` decimals, or significant digits for a p-value's 4; blank if
    not defined."""
    if value is None or value != value:
        return ""
    return number_text(value, f".{digits}f" if digits < 4 else ".4g")


def _correlation_cells(a) -> list[str]:
    """value, 95% CI, p, p Holm, p BH of one correlation, as the page prints them."""
    interval = "" if a.low != a.low else f"[{number_text(a.low, '.3f')}, {number_text(a.high, '.3f')}]"
    return [_number(a.value, 3), interval, _number(a.p_value, 4), _number(a.p_holm, 4), _number(a.p_bh, 4)]


def _chart_url(run, name, fmt):
    return reverse(f"scoring:chart_{fmt}", kwargs={"slug": run.study.slug, "run_id": run.pk, "chart": name})


@researcher_required
def chart(request, slug, run_id, chart, fmt):
    if chart not in CHARTS:
        raise Http404("no such chart")
    study = study_for_researcher(request, slug)
    # The run with its study's population stamp (studies/population.py) in the same query: a participant who
    # completes, times out or is marked excluded moves in or out of a population without a new generation, so
    # the key holds the stamp, and the charts are built with it (the mixed model's cache, too).
    run = get_object_or_404(
        ScoringRun.objects.select_related("study", "reference_version").annotate(
            **population_stamp_columns()
        ),
        pk=run_id,
        study=study,
    )
    stamp = stamp_of(run)
    # The study's default population too: a query that names none reads it.
    default = run.study.analysis_population
    query_key = hashlib.sha1(repr((request.GET.urlencode(), stamp, default)).encode()).hexdigest()
    key = f"scoring:chart:{run.pk}:{run.generation}:{chart}:{fmt}:{query_key}"
    payload = cache.get(key)
    if payload is None:
        try:
            built = chart_build(run, chart, request.GET, stamp=stamp)
        except selectors.FilterError as exc:
            return JsonResponse({"error": str(exc)}, status=400)
        payload = built.as_json() if fmt == "json" else _csv_text(built, raw=request.GET.get("raw") == "1")
        cache.set(key, payload, CACHE_SECONDS)
    if fmt == "json":
        return JsonResponse(payload)
    response = HttpResponse(payload, content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{run.study.slug}-run{run.pk}-{chart}.csv"'
    return response


class _Echo:
    def __init__(self):
        self.parts = []

    def write(self, value):
        self.parts.append(value)


def _csv_text(built: charts.Chart, *, raw: bool = False) -> str:
    """Spreadsheet-safe (labels such as participant codes or scenario titles that start like a formula get a
    leading '), or as they are with ?raw=1 (sessionlab/spreadsheet.py); the cache key holds the query
    string."""
    buffer = _Echo()
    writer = csv.writer(buffer)
    writer.writerows(safe_rows([built.header, *built.rows], raw=raw))
    return "".join(buffer.parts)
