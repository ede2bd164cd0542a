"""The researcher's replay of a session (studies/replay/session_replay.py draws nothing: it reads; the page's
script, static/js/replay.js, plays it) and the exclusion a researcher decides there, audited
(studies/assessment/exclusion.py)."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from studies.accounts.access import researcher_required, study_for_researcher
from studies.assessment.exclusion import participant_exclude, participant_include
from studies.errors import AssessmentError
from studies.models import SearchSession
from studies.replay.session_replay import session_replay


def _session_of(study, session_id: int) -> SearchSession:
    """A session of the study's own participants (a preview's included: the researcher tried it)."""
    return get_object_or_404(
        SearchSession.objects.select_related(
            "assignment__participant", "assignment__scenario", "assignment__system"
        ),
        pk=session_id,
        assignment__participant__study=study,
    )


@researcher_required
def replay(request, slug, session_id):
    study = study_for_researcher(request, slug)
    session = _session_of(study, session_id)
    participant = session.assignment.participant
    others = SearchSession.objects.filter(assignment__participant=participant).order_by(
        "assignment__position"
    )
    return render(
        request,
        "studies/replay.html",
        {
            "study": study,
            "session": session,
            "participant": participant,
            "sessions": others.select_related("assignment__scenario", "assignment__system"),
            "replay": session_replay(session=session),
        },
    )


@researcher_required
@require_POST
def exclusion(request, slug, session_id):
    """Exclude the session's participant (with a reason), or take a researcher's exclusion back."""
    study = study_for_researcher(request, slug)
    session = _session_of(study, session_id)
    participant = session.assignment.participant
    if request.POST.get("action") == "include":
        try:
            participant_include(participant=participant, by=request.user)
        except AssessmentError as error:
            messages.error(request, str(error))
        else:
            messages.success(request, f"{participant.code} is no longer excluded by you.")
    else:
        participant_exclude(participant=participant, by=request.user, reason=request.POST.get("reason", ""))
        messages.success(request, f"{participant.code} is excluded: the dashboards leave their sessions out.")
    return redirect("replay:session", slug=study.slug, session_id=session.pk)
