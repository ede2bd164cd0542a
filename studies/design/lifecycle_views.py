"""The study's life-cycle buttons (open, pause, close: on the study page and on the recruitment page, one
control for both) and its preview ("Try it as a participant", "Delete preview data"). Researchers of the
study only; each is a POST that calls studies/design/lifecycle.py and redirects."""

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from studies.accounts.access import researcher_required, study_for_researcher
from studies.design import lifecycle
from studies.errors import StudiesError

# Where the status buttons send the researcher back to: the page they pressed it on (a name, never a URL).
BACK_TO = {"study": "studies:study_detail", "recruitment": "recruitment:settings"}

STATUS_DONE = {
    lifecycle.OPEN: "The study is open: participants can be enrolled, join from the public link and start "
    "sessions.",
    lifecycle.PAUSED: "The study is paused: nobody new starts; sessions already started can be finished.",
    lifecycle.CLOSED: "The study is closed: no new participants or sessions; its data are kept.",
}


@researcher_required
@require_POST
def study_status(request, slug):
    study = study_for_researcher(request, slug)
    wanted = request.POST.get("status", "")
    try:
        lifecycle.study_status_change(study=study, status=wanted, by=request.user)
    except StudiesError as refusal:
        messages.error(request, str(refusal))
    else:
        messages.success(request, STATUS_DONE[wanted])
    back = BACK_TO.get(request.POST.get("back", ""), BACK_TO["study"])
    return redirect(back, slug=study.slug)


@researcher_required
@require_POST
def preview_start_page(request, slug):
    """A fresh preview participant; the researcher is sent to its private link."""
    study = study_for_researcher(request, slug)
    try:
        participant = lifecycle.preview_start(study=study, by=request.user)
    except StudiesError as refusal:
        messages.error(request, f"Cannot start a preview: {refusal}")
        return redirect("studies:study_detail", slug=study.slug)
    return redirect("participate:home", token=participant.access_token)


@researcher_required
@require_POST
def preview_delete_page(request, slug):
    study = study_for_researcher(request, slug)
    deleted = lifecycle.preview_delete(study=study, by=request.user)
    messages.success(
        request, f"Deleted the preview data ({deleted} preview participant{'s' if deleted != 1 else ''})."
    )
    return redirect("studies:study_detail", slug=study.slug)
