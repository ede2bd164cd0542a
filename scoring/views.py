"""Scoring pages: runs (create, progress, default), dashboards, one JSON (and CSV) endpoint per chart.

Thin: an access-checked fetch (404 for a study the researcher cannot see), a service or a chart builder,
a response. Chart JSON is cached under the run's generation, which every finished pass bumps.
"""

import csv
import hashlib

import numpy as np
from django import forms
from django.contrib import messages
from django.core.cache import cache
from django.http import Http404, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from sessionlab.spreadsheet import safe_rows
from studies.participation import DEFAULT_QUESTIONNAIRE
from studies.views import researcher_required, study_for_researcher

from . import charts, selectors, services
from .lib.session import DUPLICATES, FORMULATIONS, SCANS, SHORT_LISTS, SUMMARIES, default_weights
from .models import ScoringRun

CACHE_SECONDS = 24 * 3600


class RunForm(forms.Form):
    label = forms.CharField(max_length=200, required=False)
    weights = forms.CharField(help_text="Gain of grades 0, 1, 2, ...")
    b = forms.FloatField(initial=2.0, help_text="Rank log base, > 1 (2: impatient; 10: patient)")
    bq = forms.FloatField(initial=4.0, help_text="Query log base, 1 < bq < 1000")
    top = forms.IntegerField(initial=10, min_value=1, max_value=1000, label="Top X")
    formulation = forms.ChoiceField(choices=[(f, f) for f in FORMULATIONS], initial="2008")
    gain = forms.ChoiceField(choices=ScoringRun.Gain.choices, initial="linear")
    duplicates = forms.ChoiceField(choices=[(d, d) for d in DUPLICATES], initial="every")
    short_lists = forms.ChoiceField(choices=[(s, s) for s in SHORT_LISTS], initial="pad")
    scan = forms.ChoiceField(choices=[(s, s) for s in SCANS], initial="fixed")
    judgments = forms.ChoiceField(choices=ScoringRun.Judgments.choices, initial="reference")
    make_default = forms.BooleanField(required=False, label="Make it the study's default (live) run")

    def __init__(self, *args, study, **kwargs):
        super().__init__(*args, **kwargs)
        # The default weights follow the study's grade scale (session.default_weights); the help says which
        # grade gets which weight, so a scale of 0..4 is not met with the paper's four weights.
        self.grade_weights = grade_weights(study)
        self.fields["weights"].initial = ",".join(f"{w:g}" for _, _, w in self.grade_weights)
        self.fields["weights"].help_text = (
            "Gain of each grade, in order; this study's default: "
            + "; ".join(f"{value} ({label}) = {w:g}" for value, label, w in self.grade_weights)
            + ". Each grade above the lowest is worth ten times the one below (the paper's 0,1,10,100 on 0..3)."
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


def _run_for(request, slug, run_id):
    study = study_for_researcher(request, slug)
    return get_object_or_404(ScoringRun.objects.select_related("study", "reference_version"), pk=run_id, study=study)


@researcher_required
def runs(request, slug):
    study = study_for_researcher(request, slug)
    form = RunForm(request.POST or None, study=study)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        make_default = data.pop("make_default") or None
        try:
            run = services.scoring_run_create(study=study, created_by=request.user, make_default=make_default, **data)
        except services.ScoringError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, "Scoring run created; it is being scored.")
            return redirect("scoring:run_detail", slug=study.slug, run_id=run.pk)
    return render(request, "scoring/runs.html", {"study": study, "form": form, "runs": selectors.study_runs(study)})


@researcher_required
def run_detail(request, slug, run_id):
    run = _run_for(request, slug, run_id)
    try:
        context = _dashboard_context(request, run)
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
            context["columns"] = [_dashboard_context(request, left), _dashboard_context(request, right)]
        except selectors.FilterError as exc:
            return HttpResponseBadRequest(f"Bad filter: {exc}", content_type="text/plain; charset=utf-8")
    return render(request, "scoring/compare.html", context)


@researcher_required
@require_POST
def run_make_default(request, slug, run_id):
    run = _run_for(request, slug, run_id)
    services.scoring_run_make_default(run=run)
    messages.success(request, f"Run {run.pk} is now the study's default run.")
    return redirect("scoring:runs", slug=slug)


@researcher_required
def run_status(request, slug, run_id):
    run = _run_for(request, slug, run_id)
    return JsonResponse({
        "status": run.status, "done": run.progress_done, "total": run.progress_total, "stale": run.stale,
        "error": run.error, "finished": run.is_finished,
    })


# --- charts ----------------------------------------------------------------------------------------------------

CHARTS = {
    "curves": "Figure 2: normalized session curves per system",
    "scenario": "Figure 3: a scenario's curves per system",
    "sessions": "Figure 4: individual sessions",
    "queries": "Figure 1: last query against earlier queries",
    "participants": "Table 1: participant features",
    "query-counts": "Table 2: sessions by number of queries",
    "statistics": "Statistics between systems",
    "sensitivity": "Sensitivity to b and bq",
}


def _dashboard_context(request, run):
    """The dashboard of a run; FilterError (a filter naming nothing in the study) is the caller's 400."""
    study = run.study
    filters = selectors.ChartFilters.from_query(request.GET, study)
    query = request.GET.urlencode()
    chart_urls = [
        (name, title, f"{_chart_url(run, name, 'json')}?{query}", f"{_chart_url(run, name, 'csv')}?{query}")
        for name, title in CHARTS.items()
    ]
    return {
        "run": run, "study": study, "filters": filters, "chart_urls": chart_urls,
        "scenarios": study.scenarios.order_by("id"), "systems": study.systems.order_by("id"),
        "summaries": [(s, charts.SUMMARY_LABELS[s]) for s in SUMMARIES],
        "units": [(u, selectors.UNIT_PLURALS[u]) for u in selectors.UNITS],
        "left_out": selectors.run_scores(run, filters).left_out if run.is_finished or run.progress_done else None,
        "params": {key: request.GET.get(key, "") for key in ("k", "summary", "first", "second", "system_one")},
    }


def _chart_url(run, name, fmt):
    return reverse(f"scoring:chart_{fmt}", kwargs={"slug": run.study.slug, "run_id": run.pk, "chart": name})


def _choice(query, name: str, choices, default):
    """A chart option from the query string: `default` when absent, FilterError when not one of `choices`."""
    value = (query.get(name) or "").strip()
    if not value:
        return default
    if value not in choices:
        raise selectors.FilterError(f"{name} {value[:40]!r} is not one of {', '.join(map(str, choices))}")
    return value


def _chart_build(run, name, query) -> charts.Chart:
    """The chart, with what it averages over and the sessions it left out said on it. FilterError for a filter
    or an option naming nothing in the study."""
    filters = selectors.ChartFilters.from_query(query, run.study)
    built, left_out = _chart_of(run, name, query, filters)
    # Figure 4 draws every session; Table 1 describes participants, not scores. The rest average the unit.
    averaged_over = {"sessions": "individual sessions (no average)", "participants": "participants (not scores)"}.get(
        name, selectors.UNIT_PLURALS[filters.unit])
    return charts.annotate(built, averaged_over=averaged_over, left_out=left_out or selectors.LeftOut())


def _chart_of(run, name, query, filters):
    fixed = run.short_lists == "pad" and run.scan == "fixed"
    unit = filters.unit
    summary = _choice(query, "summary", SUMMARIES, "normalized_final")
    if name == "curves":
        scores = selectors.run_scores(run, filters, curves=True)
        return charts.curves_chart(scores, top=run.top, fixed=fixed, unit=unit), scores.left_out
    if name in ("scenario", "sessions"):
        scores = selectors.run_scores(run, filters, curves=True)
        scenarios = list(dict.fromkeys(scores.scenario))
        # Figures 3 and 4 show one scenario: the scenario filter's, or the first with scores.
        scenario = filters.scenario or (scenarios[0] if scenarios else "-")
        keep = np.asarray(scores.scenario) == scenario
        if name == "scenario":
            k = selectors.positive_int(query, "k", 4)
            subset = _subset(scores, keep)
            return (charts.scenario_chart(subset, scenario=scenario, top=run.top, fixed=fixed, k=k, unit=unit),
                    scores.left_out)
        subset = _subset(scores, keep)
        systems = list(run.study.systems.order_by("id").values_list("code", flat=True))
        system = _choice(query, "system_one", systems, "") or (filters.systems[0] if filters.systems else "")
        present = list(dict.fromkeys(subset.system))
        system = system or (present[0] if present else "-")
        subset = _subset(subset, np.asarray(subset.system) == system)
        return (charts.sessions_chart(subset, scenario=scenario, system=system, top=run.top, fixed=fixed),
                scores.left_out)
    if name == "queries":
        vectors = selectors.run_query_vectors(run, filters)
        return charts.queries_chart(vectors, unit=unit), vectors.left_out
    if name == "participants":
        items = run.study.questionnaire or DEFAULT_QUESTIONNAIRE
        answers = selectors.study_questionnaire_answers(run.study, filters)
        return charts.participants_table(answers, items), selectors.LeftOut(applies=False)
    if name == "query-counts":
        scores = selectors.run_scores(run, filters)
        return charts.query_counts_table(scores, unit=unit), scores.left_out
    if name == "statistics":
        scores = selectors.run_scores(run, filters)
        return charts.statistics_chart(scores, summary=summary, unit=unit), scores.left_out
    if name == "sensitivity":
        scores = selectors.run_scores(run, filters, grid=True)
        codes = list(run.study.systems.order_by("id").values_list("code", flat=True))
        systems = list(dict.fromkeys(scores.system))
        first = _choice(query, "first", codes, "") or (systems[0] if systems else "-")
        others = [s for s in systems if s != first]
        second = _choice(query, "second", codes, "") or (others[0] if others else "-")
        chart = charts.sensitivity_chart(scores, grid_b=run.grid_b, grid_bq=run.grid_bq, summary=summary,
                                         first=first, second=second, b=run.b, bq=run.bq, unit=unit)
        return chart, scores.left_out
    raise Http404("no such chart")


def _subset(scores, keep):
    if keep is None:
        return scores
    index = keep.nonzero()[0]
    return selectors.RunScores(
        session_id=scores.session_id[index], participant=[scores.participant[i] for i in index],
        scenario_id=scores.scenario_id[index], scenario=[scores.scenario[i] for i in index],
        system_id=scores.system_id[index], system=[scores.system[i] for i in index],
        end_reason=[scores.end_reason[i] for i in index], n_queries=scores.n_queries[index],
        length=scores.length[index], summaries={k: v[index] for k, v in scores.summaries.items()},
        curves=None if scores.curves is None else [scores.curves[i] for i in index],
        ideals=None if scores.ideals is None else [scores.ideals[i] for i in index],
        grid=None if scores.grid is None else scores.grid[index], left_out=scores.left_out,
    )


@researcher_required
def chart(request, slug, run_id, chart, fmt):
    if chart not in CHARTS:
        raise Http404("no such chart")
    run = _run_for(request, slug, run_id)
    query_key = hashlib.sha1(request.GET.urlencode().encode()).hexdigest()
    key = f"scoring:chart:{run.pk}:{run.generation}:{chart}:{fmt}:{query_key}"
    payload = cache.get(key)
    if payload is None:
        try:
            built = _chart_build(run, chart, request.GET)
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
    leading '), or as they are with ?raw=1 (sessionlab/spreadsheet.py); the cache key holds the query string."""
    buffer = _Echo()
    writer = csv.writer(buffer)
    writer.writerows(safe_rows([built.header, *built.rows], raw=raw))
    return "".join(buffer.parts)
