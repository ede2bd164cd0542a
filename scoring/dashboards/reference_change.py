"""The conclusion-change page (issue 30): how the study's conclusion (system order, Kendall's tau, the test
between systems) changes between two reference versions, by default the latest made without a machine
assessor's grades against the latest made with them. The reading is scoring/reference_change.py."""

from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import render

from studies.design.views import researcher_required, study_for_researcher
from studies.population import PopulationError, population_count, population_from_query

from ..models import ScoringRun
from ..reference_change import (
    SUMMARIES_COMPARED,
    ReferenceChangeError,
    reference_change,
    versions_compared,
)


@researcher_required
def reference_change_page(request, slug):
    study = study_for_researcher(request, slug)
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
    versions = list(study.reference_versions.order_by("-number"))
    run = ScoringRun.objects.filter(study=study, is_default=True).first()
    result = None
    if run is not None and before is not None and after is not None:
        result = reference_change(run=run, before=before, after=after, population=population)
    context = {
        "study": study,
        "run": run,
        "before": before,
        "after": after,
        "versions": versions,
        "population": population,
        "counted": population_count(study, population),
        "result": result,
        "summaries": [
            (summary, label, result.changes.get(summary)) for summary, label in SUMMARIES_COMPARED.items()
        ]
        if result
        else [],
    }
    return render(request, "scoring/reference_change.html", context)
