"""Recruitment and attrition: the participant's state, the public link, the study-level time limit and its
sweep, completion codes, the panel's status notifications (docs/recruitment.md).

A participant's state is one of studies.models.ParticipantState. Three are derived from their rows and move on
by themselves (invited -> started -> active); five are where they end: completed (every scenario worked and
answered), withdrawn (a withdrawal, or declining consent), and three that free their plan row for the next
arrival: returned (the panel says so), timed out (the study-level time limit, the sweep), screened out (a
failed check). Only withdrawn follows another ending (completed or not: the data are gone). Every change is
one conditional UPDATE (two requests cannot both make it) and one AuditEntry.

One module per concern; every name callers use is re-exported here:
- states.py: the state changes, the visit, the study-level time-out, the screen-out.
- panels.py: the panels' parameters, the public link's ids, a study's recruitment settings.
- checks.py: attention and comprehension checks and each answer's outcome.
- sweep.py: the overdue sweep (a scheduler's task; without one, arrivals, requests and the study page).
- join.py: the public link's arrivals, each given a row by studies/design/rows.py (rows_to_issue).
- completion.py: the completion code and the panel's URL or MTurk's form.
- effort.py: the minimum-effort rules and each participant's flags (the pure rule: ../effort_flags.py).
- resume.py: the proofs that resume through the public link (the first browser's cookie, the resume code).
- codes.py: per-participant completion codes (generated, or a pool handed out once) and the typed codes.
- panel_status.py: the panel's status notifications and its submissions export.
- panel_reconciliation.py: the disagreements between the panel's word and ours.
"""

from studies.design.rows import RowCounts, holds_row, plan_row_of, row_counts, rows_to_issue
from studies.errors import Refused
from studies.kernel.states import state_of
from studies.participation.recruitment.checks import (
    CHECK_KINDS,
    CHECK_PRESETS,
    MAX_CHECKS,
    CheckProgress,
    check_answer_record,
    check_items,
    check_items_errors,
    checks_progress,
    gold_failures,
)
from studies.participation.recruitment.codes import (
    TypedCode,
    completion_code_take,
    completion_pool_add,
    pool_counts,
    typed_codes_match,
)
from studies.participation.recruitment.completion import (
    Completion,
    completion_of,
    last_stored_sequence,
    mturk_submit_to_of,
    outcome_code,
)
from studies.participation.recruitment.effort import (
    participant_flags,
    preset_of,
    rules_of,
    study_flags,
)
from studies.participation.recruitment.join import Joined, participant_join, participant_of_panel_id
from studies.participation.recruitment.panel_reconciliation import (
    NORMAL_PAIRS,
    Disagreement,
    FlaggedParticipant,
    flagged_participants,
    normal_outcome,
    reconciliation,
    reconciliation_explained,
)
from studies.participation.recruitment.panel_status import (
    MAX_IMPORT_BYTES,
    PANEL_ENDS,
    PANEL_STATUS_NAMES,
    ImportResult,
    panel_export_import,
    panel_status_record,
    status_time_error,
)
from studies.participation.recruitment.panels import (
    MAX_STUDY_LIMIT_MINUTES,
    MTURK_PARAMS,
    MTURK_PREVIEW,
    PANEL_ID_TEXT,
    PANELS,
    RECRUITMENT_SETTINGS,
    Panel,
    PanelIds,
    completion_url_template,
    mturk_frame_ancestors,
    mturk_preview,
    mturk_submit_hosts,
    mturk_submit_to_from_query,
    mturk_submit_url,
    mturk_tab_query,
    panel_id_canonical,
    panel_id_lookup,
    panel_ids_from_query,
    recruitment_of,
    recruitment_update,
)
from studies.participation.recruitment.resume import (
    RESUME_CODE_TRIES,
    RESUME_COOKIE_SECONDS,
    resume_code_matches,
    resume_code_of,
    resume_cookie_name,
    resume_cookie_proves,
    resume_cookie_value,
    resume_tries_left,
)
from studies.participation.recruitment.states import (
    ACTIVE,
    COMPLETED,
    ENDED,
    ENDED_MESSAGES,
    FREEING,
    INVITED,
    RETURNED,
    SCREENED_OUT,
    STARTED,
    TIMED_OUT,
    WITHDRAWN,
    participant_clock_start,
    participant_complete,
    participant_deadline,
    participant_screen_out,
    participant_sessions_end,
    participant_state_set,
    participant_state_sync,
    participant_time_out_if_due,
    participant_visit,
    session_done,
    state_derived,
)
from studies.participation.recruitment.sweep import (
    SweepResult,
    arrival_sweep,
    connect_receivers,
    freed_sessions_end,
    overdue_time_out,
    scheduler_heartbeat,
    scheduler_last_run,
    study_opened_sweep,
    study_sweep,
    study_sweep_throttled,
)

__all__ = [
    "RESUME_CODE_TRIES",
    "RESUME_COOKIE_SECONDS",
    "participant_of_panel_id",
    "resume_code_matches",
    "resume_code_of",
    "resume_cookie_name",
    "resume_cookie_proves",
    "resume_cookie_value",
    "resume_tries_left",
    "study_sweep_throttled",
    "scheduler_last_run",
    "scheduler_heartbeat",
    "overdue_time_out",
    "freed_sessions_end",
    "arrival_sweep",
    "ACTIVE",
    "CHECK_KINDS",
    "CHECK_PRESETS",
    "COMPLETED",
    "ENDED",
    "ENDED_MESSAGES",
    "FREEING",
    "INVITED",
    "MAX_CHECKS",
    "MAX_IMPORT_BYTES",
    "MAX_STUDY_LIMIT_MINUTES",
    "MTURK_PARAMS",
    "MTURK_PREVIEW",
    "NORMAL_PAIRS",
    "PANELS",
    "PANEL_ENDS",
    "PANEL_ID_TEXT",
    "PANEL_STATUS_NAMES",
    "RECRUITMENT_SETTINGS",
    "RETURNED",
    "SCREENED_OUT",
    "STARTED",
    "TIMED_OUT",
    "WITHDRAWN",
    "CheckProgress",
    "Completion",
    "Disagreement",
    "FlaggedParticipant",
    "ImportResult",
    "Joined",
    "Panel",
    "PanelIds",
    "Refused",
    "RowCounts",
    "SweepResult",
    "check_answer_record",
    "check_items",
    "check_items_errors",
    "checks_progress",
    "completion_of",
    "completion_url_template",
    "connect_receivers",
    "flagged_participants",
    "gold_failures",
    "holds_row",
    "last_stored_sequence",
    "mturk_frame_ancestors",
    "mturk_preview",
    "mturk_submit_hosts",
    "mturk_submit_to_from_query",
    "mturk_submit_to_of",
    "mturk_submit_url",
    "mturk_tab_query",
    "normal_outcome",
    "panel_export_import",
    "panel_id_canonical",
    "panel_id_lookup",
    "panel_ids_from_query",
    "panel_status_record",
    "participant_clock_start",
    "participant_deadline",
    "participant_sessions_end",
    "participant_join",
    "participant_screen_out",
    "participant_state_set",
    "participant_state_sync",
    "participant_time_out_if_due",
    "participant_visit",
    "plan_row_of",
    "reconciliation",
    "reconciliation_explained",
    "recruitment_of",
    "recruitment_update",
    "row_counts",
    "rows_to_issue",
    "session_done",
    "state_derived",
    "state_of",
    "status_time_error",
    "study_opened_sweep",
    "study_sweep",
    "TypedCode",
    "completion_code_take",
    "completion_pool_add",
    "outcome_code",
    "pool_counts",
    "typed_codes_match",
    "participant_flags",
    "preset_of",
    "rules_of",
    "study_flags",
    "participant_complete",
]
