"""Every export of a study as a download from its pages: the archive, the tidy CSV (zip), the runs (zip), the
qrels of each reference version, the TREC Session Track XML. The same bytes as the commands and the API."""

from django.http import HttpResponse
from django.shortcuts import render

from studies.design.views import researcher_required, study_for_researcher
from studies.errors import ExportError
from studies.interchange.archive import study_archive_json
from studies.interchange.downloads import study_csv_zip, study_runs_zip
from studies.interchange.session_track import session_track_export
from studies.interchange.trec import UNITS, study_qrels


def _download(body, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["Cache-Control"] = "no-store"
    return response


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
        },
    )


@researcher_required
def archive(request, slug):
    study = study_for_researcher(request, slug)
    return _download(study_archive_json(study=study), "application/json", f"{study.slug}-archive.json")


@researcher_required
def tidy_csv(request, slug):
    study = study_for_researcher(request, slug)
    raw = request.GET.get("raw") == "1"
    return _download(study_csv_zip(study=study, raw=raw), "application/zip", f"{study.slug}-tables.zip")


@researcher_required
def runs(request, slug, unit):
    study = study_for_researcher(request, slug)
    try:
        body = study_runs_zip(study=study, unit=unit)
    except ExportError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    return _download(body, "application/zip", f"{study.slug}-runs-{unit}.zip")


@researcher_required
def qrels(request, slug, number):
    study = study_for_researcher(request, slug)
    try:
        version, text = study_qrels(study=study, number=number)
    except ExportError as exc:
        return HttpResponse(str(exc), status=404, content_type="text/plain; charset=utf-8")
    return _download(text, "text/plain; charset=utf-8", f"{study.slug}-reference-v{version.number}.qrels")


@researcher_required
def session_track(request, slug):
    study = study_for_researcher(request, slug)
    return _download(session_track_export(study=study), "application/xml", f"{study.slug}-session-track.xml")
