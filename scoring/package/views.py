"""The study package as a download beside the study page's other files (templates/studies/downloads.html)."""

from __future__ import annotations

from django.http import HttpResponse

from studies.accounts.access import researcher_required, study_for_researcher

from .export import study_package_zip


@researcher_required
def package_zip(request, slug):
    study = study_for_researcher(request, slug)
    response = HttpResponse(study_package_zip(study=study), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-package.zip"'
    response["Cache-Control"] = "no-store"
    return response
