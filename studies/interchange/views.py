"""Every export of a study as a download from its pages: the archive, the tidy CSV (zip), the runs (zip), the
qrels of each reference version, the TREC Session Track XML, the assessors' agreement (CSV), and the
lab-only panel-ids.csv. The same bytes as the commands and the API. The big ones stream
(studies/interchange/downloads.py); what can be refused is refused before the first byte. The panel ids are
in the archive and the tables only with `?include=panel_ids`, for the study's owner alone
(studies/interchange/panel_ids.py)."""

from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import render

from studies.accounts.access import panel_ids_visible_to, researcher_required, study_for_researcher
from studies.assessment.adjudication import assessor_agreement
from studies.assessment.assessor_figures import agreement_csv_rows, assessor_figures
from studies.errors import ExportError, StudyOwnerOnlyError
from studies.interchange.archive import study_archive_stream
from studies.interchange.downloads import encoded, runs_zip_stream, tables_zip_stream
from studies.interchange.panel_ids import (
    PANEL_ID_CSV_OWNER_ONLY,
    panel_id_rows,
    panel_ids_asked,
)
from studies.interchange.session_track import session_track_stream
from studies.interchange.tidy_csv import table_csv, table_csv_lines
from studies.interchange.trec import UNITS, study_qrels
from studies.population import (
    BASES,
    LEAVE_OUTS,
    PopulationError,
    population_count,
    population_from_query,
    study_population,
)


def _download(body, content_type: str, filename: str) -> HttpResponse | StreamingHttpResponse:
    if isinstance(body, (bytes, str)):
        response: HttpResponse | StreamingHttpResponse = HttpResponse(body, content_type=content_type)
    else:
        response = StreamingHttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["Cache-Control"] = "no-store"
    return response


def _refused(exc: ExportError | StudyOwnerOnlyError, status: int) -> HttpResponse:
    return HttpResponse(str(exc), status=status, content_type="text/plain; charset=utf-8")


def _panel_ids(request, study):
    """Whether the request asks for the panel ids (`include=panel_ids`), and may; else the refusal to send:
    a 400 for an unknown `include`, a 403 with the reason for anyone but the study's owner."""
    try:
        return panel_ids_asked(study=study, user=request.user, include=request.GET.getlist("include")), None
    except StudyOwnerOnlyError as exc:
        return False, _refused(exc, 403)
    except ExportError as exc:
        return False, _refused(exc, 400)


@researcher_required
def downloads(request, slug):
    study = study_for_researcher(request, slug)
    return render(
        request,
        "studies/downloads.html",
        {
            "study": study,
            "versions": study.reference_versions.order_by("-number"),
            "units": UNITS,
            "sessions": study.participants.filter(assignments__session__isnull=False, preview_at__isnull=True)
            .distinct()
            .count(),
            # Archived events are not in the files below until restored (docs/deploying.md, "The event log").
            "archived": study.event_archives.filter(restored_at__isnull=True).order_by("archived_at"),
            "population": study_population(study),
            "population_count": population_count(study, study_population(study)),
            "population_bases": list(BASES.items()),
            "population_leave_outs": list(LEAVE_OUTS.items()),
            "panel_ids_given": panel_ids_visible_to(user=request.user, study=study),
        },
    )


@researcher_required
def archive(request, slug):
    study = study_for_researcher(request, slug)
    panel_ids, refusal = _panel_ids(request, study)
    if refusal is not None:
        return refusal
    try:
        body = study_archive_stream(study=study, panel_ids=panel_ids)
    except ExportError as exc:
        return _refused(exc, 409)
    return _download(body, "application/json", f"{study.slug}-archive.json")


@researcher_required
def tidy_csv(request, slug):
    study = study_for_researcher(request, slug)
    raw = request.GET.get("raw") == "1"
    panel_ids, refusal = _panel_ids(request, study)
    if refusal is not None:
        return refusal
    try:  # the study's default population unless the query asks for another (population.txt says which)
        population = population_from_query(request.GET, study)
    except PopulationError as exc:
        return _refused(ExportError(str(exc)), 400)
    return _download(
        tables_zip_stream(study=study, raw=raw, population=population, panel_ids=panel_ids),
        "application/zip",
        f"{study.slug}-tables.zip",
    )


@researcher_required
def runs(request, slug, unit):
    study = study_for_researcher(request, slug)
    try:
        body = runs_zip_stream(
            study=study,
            unit=unit,
            population=population_from_query(request.GET, study),
            practice=request.GET.get("practice", "leave"),
        )
    except PopulationError as exc:
        return _refused(ExportError(str(exc)), 400)
    except ExportError as exc:
        return _refused(exc, 400)
    return _download(body, "application/zip", f"{study.slug}-runs-{unit}.zip")


@researcher_required
def qrels(request, slug, number):
    study = study_for_researcher(request, slug)
    try:
        version, text = study_qrels(study=study, number=number)
    except ExportError as exc:
        return _refused(exc, 404)
    return _download(text, "text/plain; charset=utf-8", f"{study.slug}-reference-v{version.number}.qrels")


@researcher_required
def session_track(request, slug):
    study = study_for_researcher(request, slug)
    return _download(session_track_stream(study=study), "application/xml", f"{study.slug}-session-track.xml")


@researcher_required
def agreement_csv(request, slug):
    """Every agreement coefficient with its interval, per scenario and overall, for each pair of assessors and
    over all of them (studies/assessment/agreement_estimates.py; docs/assessing.md, "Agreement"), and each
    assessor against the reference (assessor_figures.py), told apart by the last column, `comparison`."""
    study = study_for_researcher(request, slug)
    raw = request.GET.get("raw") == "1"
    rows = agreement_csv_rows(assessor_agreement(study=study), assessor_figures(study=study))
    body = table_csv(rows, raw=raw)
    return _download(body, "text/csv; charset=utf-8", f"{study.slug}-agreement.csv")


@researcher_required
def panel_ids_csv(request, slug):
    """The lab-only file for paying and reconciling on the panel: a row per participant who came with a panel
    id (panel_ids.panel_id_rows); the study's owner alone, anyone else a 403 saying why."""
    study = study_for_researcher(request, slug)
    if not panel_ids_visible_to(user=request.user, study=study):
        return _refused(StudyOwnerOnlyError(PANEL_ID_CSV_OWNER_ONLY), 403)
    raw = request.GET.get("raw") == "1"
    body = encoded(table_csv_lines(panel_id_rows(study=study), raw=raw))
    return _download(body, "text/csv; charset=utf-8", f"{study.slug}-panel-ids.csv")
