"""The conclusion-change page: how the study's conclusion (system order, Kendall's tau, the test
between systems) changes between two reference versions, by default the latest made without a machine
assessor's grades against the latest made with them, and its chart's JSON (the cells' means under each
version, drawn by static/js/charts.js). The reading is scoring/reference_change.py."""

from django.http import HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import render

from studies.accounts.access import researcher_required, study_for_researcher
from studies.population import PopulationError, population_count, population_from_query

from ..models import ScoringRun
from ..reference_change import (
    SUMMARIES_COMPARED,
    ReferenceChangeError,
    reference_change,
    reference_change_figure,
    versions_compared,
)
from ..selectors import ChartFilters, FilterError


def _asked(request, study):
    """(population, before, after, run, result) for the query, or the 400/404 response naming what is
    wrong."""
    try:
        population = population_from_query(request.GET, study)
    except PopulationError as exc:
        return HttpResponseBadRequest(f"Bad population: {exc}", content_type="text/plain; charset=utf-8")
    try:
        before, after = versions_compared(study, request.GET)
    except ReferenceChangeError as exc:
        return HttpResponse(
            f"Bad version: {exc}", status=exc.status, content_type="text/plain; charset=utf-8"
        )
    try:
        filters = ChartFilters.from_query(request.GET, study)
    except FilterError as exc:
        return HttpResponseBadRequest(f"Bad filter: {exc}", content_type="text/plain; charset=utf-8")
    run = ScoringRun.objects.filter(study=study, is_default=True).first()
    result = None
    if run is not None and before is not None and after is not None:
        result = reference_change(run=run, before=before, after=after, population=population, filters=filters)
    return population, before, after, run, result


@researcher_required
def reference_change_page(request, slug):
    study = study_for_researcher(request, slug)
    asked = _asked(request, study)
    if isinstance(asked, HttpResponse):
        return asked
    population, before, after, run, result = asked
    context = {
        "study": study,
        "run": run,
        "before": before,
        "after": after,
        "versions": list(study.reference_versions.order_by("-number")),
        "population": population,
        "counted": population_count(study, population),
        "result": result,
        "query": request.GET.urlencode(),
        "summaries": [
            (summary, label, result.changes.get(summary)) for summary, label in SUMMARIES_COMPARED.items()
        ]
        if result
        else [],
    }
    return render(request, "scoring/reference_change.html", context)


@researcher_required
def reference_change_json(request, slug):
    """{"figure": {data, layout}, "notes": [...]}: each system x scenario cell's final sDCG, both versions."""
    study = study_for_researcher(request, slug)
    asked = _asked(request, study)
    if isinstance(asked, HttpResponse):
        return asked
    population, _before, _after, _run, result = asked
    if result is None or not result.changes:
        return JsonResponse({"figure": {"data": [], "layout": {}}, "notes": ["Nothing to compare yet."]})
    figure, notes = reference_change_figure(result)
    return JsonResponse({"figure": figure, "notes": notes})
