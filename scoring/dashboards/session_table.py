"""The sessions table of a run: one row per session the dashboard's filters keep, with its scores,
its attention figures and a link to its replay, so a researcher can go from a number to what happened."""

from django.http import HttpResponseBadRequest
from django.shortcuts import render

from studies.accounts.access import researcher_required

from .. import selectors
from .views import dashboard_context, run_for


@researcher_required
def run_sessions(request, slug, run_id):
    run = run_for(request, slug, run_id)
    try:
        context = dashboard_context(request, run)
        scores = selectors.run_scores(run, context["filters"])
    except selectors.FilterError as exc:
        return HttpResponseBadRequest(f"Bad filter: {exc}", content_type="text/plain; charset=utf-8")
    attention = selectors.run_session_attention(scores.session_id, seen_ms=run.scan_min_visible_ms)
    rows = []
    for i, session_id in enumerate(scores.session_id.tolist()):
        duration = int(attention.duration_ms[i])
        rows.append(
            {
                "session_id": session_id,
                "participant": scores.participant[i],
                "scenario": scores.scenario[i],
                "system": scores.system[i],
                "end_reason": scores.end_reason[i] or "",
                "queries": int(scores.n_queries[i]),
                "final": float(scores.summaries["final"][i]),
                "normalized_final": float(scores.summaries["normalized_final"][i]),
                # None, not 0, for a session without an end: its time is not known yet.
                "duration_s": duration / 1000 if duration else None,
                "active_s": int(attention.active_ms[i]) / 1000 if duration else None,
                "seen": int(attention.seen[i]),
                "away": int(attention.spans[i]),
            }
        )
    context.update({"rows": rows, "query": request.GET.urlencode()})
    return render(request, "scoring/run_sessions.html", context)
