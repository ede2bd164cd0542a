"""Recruitment and attrition: the participant's state, the public link, the study-level time limit and its
sweep, completion codes, the panel's status notifications (docs/recruitment.md).

A participant's state is one of studies.models.ParticipantState. Three are derived from their rows and move on
by themselves (invited -> started -> active); five are where they end: completed (every scenario worked and
answered), withdrawn (a withdrawal, or declining consent), and three that free their plan row for the next
arrival: returned (the panel says so), timed out (the study-level time limit, the sweep), screened out (a
failed check). Only withdrawn follows another ending (completed or not: the data are gone). Every change is
one conditional UPDATE (two requests cannot both make it) and one AuditEntry.

One module per concern, each imported by its own name (this package re-exports nothing):
- states.py: the state changes, the visit, the study-level time-out, the screen-out.
- panels.py: the panels' parameters, the public link's ids, a study's recruitment settings.
- checks.py: attention and comprehension checks and each answer's outcome.
- sweep.py: the overdue sweep (a scheduler's task; without one, arrivals, requests and the study page).
- join.py: the public link's arrivals, each given a row by studies/design/rows.py (rows_to_issue).
- completion.py: the completion code and the panel's URL or MTurk's form.
- effort.py: the minimum-effort rules and each participant's flags (the pure rule: effort_flags.py).
- resume.py: the proofs that resume through the public link (the first browser's cookie, the resume code).
- codes.py: per-participant completion codes (generated, or a pool handed out once) and the typed codes.
- panel_status.py: the panel's status notifications and its submissions export.
- panel_reconciliation.py: the disagreements between the panel's word and ours.
- selectors.py: which studies the overdue sweep visits.
- the researcher's pages: views.py and urls.py (the recruitment page), panel_views.py and panel_urls.py (the
  public link's arrivals and the panel's notifications).
"""
