"""Scoring pages: runs (create, progress, default), dashboards, one JSON (and CSV) endpoint per chart.

Thin: an access-checked fetch (404 for a study the researcher cannot see), a service or a chart builder,
a response. Chart JSON is cached under the run's generation, which every finished pass bumps.
"""

import csv
import hashlib

from django import forms
from django.contrib import messages
from django.core.cache import cache
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from sessionlab.spreadsheet import safe_rows
from studies.participation import DEFAULT_QUESTIONNAIRE
from studies.views import _study_for, researcher_required

from . import charts, selectors, services
from .models import ScoringRun
from .session import DUPLICATES, FORMULATIONS, SCANS, SHORT_LISTS, SUMMARIES, default_weights

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
    study = _study_for(request, slug)
    return get_object_or_404(ScoringRun.objects.select_related("study", "reference_version"), pk=run_id, study=study)


@researcher_required
def runs(request, slug):
    study = _study_for(request, slug)
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
    return render(request, "scoring/run_detail.html", _dashboard_context(request, run))


@researcher_required
def compare(request, slug):
    study = _study_for(request, slug)
    all_runs = list(selectors.study_runs(study))
    by_id = {str(r.pk): r for r in all_runs}
    left, right = by_id.get(request.GET.get("left", "")), by_id.get(request.GET.get("right", ""))
    if left is None or right is None:
        left, right = (all_runs[1], all_runs[0]) if len(all_runs) >= 2 else (None, None)
    context = {"study": study, "runs": all_runs, "left": left, "right": right}
    if left and right:
        context["columns"] = [_dashboard_context(request, left), _dashboard_context(request, right)]
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
    filters = selectors.ChartFilters.from_query(request.GET)
    study = run.study
    query = request.GET.urlencode()
    chart_urls = [
        (name, title, f"{_chart_url(run, name, 'json')}?{query}", f"{_chart_url(run, name, 'csv')}?{query}")
        for name, title in CHARTS.items()
    ]
    return {
        "run": run, "study": study, "filters": filters, "chart_urls": chart_urls,
        "scenarios": study.scenarios.order_by("id"), "systems": study.systems.order_by("id"),
        "summaries": [(s, charts.SUMMARY_LABELS[s]) for s in SUMMARIES],
        "params": {key: request.GET.get(key, "") for key in ("k", "summary", "block", "first", "second", "system_one")},
    }


def _chart_url(run, name, fmt):
    return reverse(f"scoring:chart_{fmt}", kwargs={"slug": run.study.slug, "run_id": run.pk, "chart": name})


def _chart_build(run, name, query) -> charts.Chart:
    filters = selectors.ChartFilters.from_query(query)
    fixed = run.short_lists == "pad" and run.scan == "fixed"
    if name == "curves":
        return charts.curves_chart(selectors.run_scores(run, filters, curves=True), top=run.top, fixed=fixed)
    if name in ("scenario", "sessions"):
        scores = selectors.run_scores(run, filters, curves=True)
        scenario = _pick(query.get("scenario"), scores.scenario_id, scores.scenario)
        keep = scores.scenario_id == scenario[0] if scenario else None
        if name == "scenario":
            k = max(1, _int(query.get("k"), 4))
            scores = _subset(scores, keep)
            return charts.scenario_chart(scores, scenario=scenario[1] if scenario else "-", top=run.top,
                                         fixed=fixed, k=k)
        scores = _subset(scores, keep)
        system = _pick(query.get("system_one") or query.get("system"), scores.system_id, scores.system)
        scores = _subset(scores, scores.system_id == system[0] if system else None)
        return charts.sessions_chart(scores, scenario=scenario[1] if scenario else "-",
                                     system=system[1] if system else "-", top=run.top, fixed=fixed)
    if name == "queries":
        return charts.queries_chart(selectors.run_query_vectors(run, filters))
    if name == "participants":
        items = run.study.questionnaire or DEFAULT_QUESTIONNAIRE
        return charts.participants_table(selectors.study_questionnaire_answers(run.study, filters), items)
    if name == "query-counts":
        return charts.query_counts_table(selectors.run_scores(run, filters))
    if name == "statistics":
        summary = query.get("summary") if query.get("summary") in SUMMARIES else "normalized_final"
        block = "scenario" if query.get("block") == "scenario" else "participant"
        return charts.statistics_chart(selectors.run_scores(run, filters), summary=summary, block=block)
    if name == "sensitivity":
        scores = selectors.run_scores(run, filters, grid=True)
        systems = list(dict.fromkeys(scores.system))
        first = query.get("first") if query.get("first") in systems else (systems[0] if systems else "-")
        others = [s for s in systems if s != first]
        second = query.get("second") if query.get("second") in others else (others[0] if others else "-")
        summary = query.get("summary") if query.get("summary") in SUMMARIES else "normalized_final"
        return charts.sensitivity_chart(scores, grid_b=run.grid_b, grid_bq=run.grid_bq, summary=summary,
                                        first=first, second=second, b=run.b, bq=run.bq)
    raise Http404("no such chart")


def _int(value, default):
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _pick(wanted, ids, labels):
    """(id, label) of the wanted id if present, else the first; None when there is nothing."""
    pairs = dict(zip(ids.tolist(), labels, strict=True))
    wanted = _int(wanted, None)
    if wanted in pairs:
        return wanted, pairs[wanted]
    return next(iter(pairs.items()), None)


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
        grid=None if scores.grid is None else scores.grid[index],
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
        built = _chart_build(run, chart, request.GET)
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
