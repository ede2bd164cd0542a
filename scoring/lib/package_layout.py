"""A study package's layout (docs/package.md): Psych-DS-like file names and the codebook of every column.
Pure (no Django): the writer (scoring/package) and the reader (package_reader.py) share it.

A package is a zip of
- `dataset_description.json`: Psych-DS's required keys (@context "https://schema.org/", @type "Dataset",
  name, description) and `variableMeasured`, one PropertyValue per column of every data file;
- `data/study-<study>_data-<table>_data.csv`, one per table of TABLES (Psych-DS's keyword-value file names:
  keywords and values letters and digits only, `_data.csv` last);
- `codebook.csv` (table, column, description), the same codebook as a table;
- `sessionlab-archive.json`: the study's JSON archive (studies/interchange/archive), which `manage.py
  import_package` imports and re-scores;
- `ro-crate-metadata.json`: RO-Crate 1.1 metadata describing each file.
"""

from __future__ import annotations

import re

DESCRIPTION = "dataset_description.json"
CRATE = "ro-crate-metadata.json"
CODEBOOK = "codebook.csv"
ARCHIVE = "sessionlab-archive.json"
DATA_DIR = "data"
PSYCH_DS_CONTEXT = "https://schema.org/"
CRATE_CONTEXT = "https://w3id.org/ro/crate/1.1/context"
CRATE_SPEC = "https://w3id.org/ro/crate/1.1"

# Every table of a package, in order: the tidy CSV's (studies/interchange/tidy_csv.py), then the event log,
# the reference versions' judgments (qrels with provenance), the scoring runs' parameters and their scores.
TIDY_TABLES = ("participants", "sessions", "queries", "shown_results", "judgments", "exposures", "attention")
TABLES = (*TIDY_TABLES, "events", "qrels", "scoring_runs", "scores")

# A package never holds a panel's ids (docs/recruitment.md, "Exports"): these columns are left out.
PANEL_ID_COLUMNS = ("panel_id", "panel_study_id", "panel_session_id")
# The event log's and the qrels' tables: written by scoring/package/export.py, read by package_reader.
EVENT_COLUMNS = (
    "study",
    "participant",
    "position",
    "sequence",
    "type",
    "client_event_id",
    "client_time",
    "server_time",
    "origin",
    "payload",
)
QRELS_COLUMNS = (
    "study",
    "version",
    "version_note",
    "version_created_at",
    "version_created_by",
    "provenance",
    "topic",
    "doc",
    "grade",
    "source",
    "judged_by",
)

_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
# Psych-DS: keyword-value pairs joined by "_", each "keyword-value", then "_data.csv".
FILE_NAME = re.compile(r"^(?:[a-z]+-[A-Za-z0-9]+_)+data\.csv$")


def psych_ds_value(text: str) -> str:
    """A Psych-DS keyword value: `text` with everything but letters and digits left out ("x" when none)."""
    return _NOT_ALNUM.sub("", text) or "x"


def data_file_name(study: str, table: str) -> str:
    """The data file of `table` in a package of the study with slug `study`, under data/."""
    return f"{DATA_DIR}/study-{psych_ds_value(study)}_data-{psych_ds_value(table)}_data.csv"


def table_of_file(name: str) -> str | None:
    """The table (of TABLES) a data file's name holds, or None."""
    base = name.rsplit("/", 1)[-1]
    if not FILE_NAME.match(base):
        return None
    pairs = dict(part.split("-", 1) for part in base[: -len("_data.csv")].split("_"))
    by_value = {psych_ds_value(table): table for table in TABLES}
    return by_value.get(pairs.get("data", ""))


DESIGN = {
    "study": "The study's slug.",
    "participant": "The participant's pseudonymous code (never a panel id or an account).",
    "position": "The task's position in the participant's order (1-based).",
    "scenario": "The scenario's (task's) code.",
    "topic": "The scenario's topic id: the topic of the reference judgments (qrels).",
    "system": "The search system's code.",
    "retake": "1 when the task repeats an earlier one (a retake), else 0.",
    "practice": "1 for a practice task (worked first, never scored), else 0.",
}
COLUMNS: dict[str, str] = {
    **DESIGN,
    # participants
    "enrolment_index": "0-based order of enrolment.",
    "plan_row": "The Latin-square row of the assignment plan the participant works.",
    "reissue_of": "The code of the participant whose freed plan row this one re-uses; empty otherwise.",
    "state": "The participant's state (invited, started, active, completed, returned, timed_out, ...).",
    "state_reason": "Why the state was reached.",
    "state_changed_at": "When the state was reached (ISO 8601, UTC).",
    "consent_version": "The consent text's version the participant agreed to.",
    "consented_at": "When the participant consented (ISO 8601, UTC).",
    "declined_at": "When the participant declined consent (ISO 8601, UTC).",
    "withdrawn_at": "When the participant withdrew (ISO 8601, UTC).",
    "enrolled_at": "When the participant was enrolled (ISO 8601, UTC).",
    "sessions": "Tasks started.",
    "sessions_ended": "Tasks ended.",
    "panel": "The recruitment panel the participant came from, if any (its ids are never in a package).",
    "panel_status": "The panel's last word on the participant (approved, returned, ...).",
    "panel_status_at": "When the panel said it (ISO 8601, UTC).",
    "excluded": "1 when the study's exclusion rule or a researcher marked the participant, else 0.",
    "excluded_by": "Who excluded: manual (a researcher) or rule (the agreement rule).",
    "excluded_at": "When the participant was excluded (ISO 8601, UTC).",
    "excluded_reason": "Why the participant was excluded.",
    "excluded_agreement": "The agreement figure the exclusion rule read.",
    # sessions
    "started_at": "When it started (ISO 8601, UTC).",
    "ended_at": "When it ended (ISO 8601, UTC); empty while it runs.",
    "end_reason": "How the session ended: satisfied, gave_up, timed_out, withdrawn or left.",
    "duration_s": "Seconds from start to end.",
    "queries": "Queries issued in the session.",
    "results_shown": "Results shown (rows of shown results).",
    "documents_opened": "Documents opened (clicks).",
    "judgments": "Documents the participant judged.",
    "pre_task_answers": "The answers before the task, as a JSON object {item: answer}.",
    "post_task_answers": "The answers after the task, as a JSON object {item: answer}.",
    "gold_passed": "1 or 0 when the participant judged the scenario's gold documents; empty without gold.",
    "effort_flags": "The task's minimum-effort flags, ';'-separated (no_queries, speeder, ...).",
    "effort_reasons": "Why each effort flag was raised.",
    "active_s": "Seconds of the session less every moment the tab was hidden, blurred or idle.",
    # queries
    "query": "The query's position in its session (1-based).",
    "text": "The query's text as issued.",
    "issued_at": "When the query was issued (ISO 8601, UTC).",
    "seconds_from_start": "Seconds from the session's start to the query.",
    "scan_mark_rank": "The rank down to which the participant marked the list as scanned; empty if none.",
    "system_message": "What the system said instead of (or beside) results, e.g. a failure message.",
    "first_key_ms": "Milliseconds from the search box's focus to the first key pressed.",
    "formulation_ms": "Milliseconds spent formulating the query.",
    # shown results, exposures
    "rank": "The result's rank in the list shown (1-based, absolute over pages).",
    "page": "The results page (1-based).",
    "doc": "The document's id in the study's collection.",
    "shown_at": "When the result was shown (ISO 8601, UTC).",
    "opened": "Times the participant opened this result.",
    "participant_grade": "The participant's current grade of the document; empty when not judged.",
    "first_visible_ms": "Milliseconds from the page shown to the result first on screen.",
    "last_visible_ms": "Milliseconds from the page shown to the result last on screen.",
    "visible_ms": "Milliseconds the result was on screen.",
    "max_visible_permille": "The largest share of the result on screen at once, per mille.",
    "hover_ms": "Milliseconds the pointer rested on the result.",
    "hovers": "Times the pointer entered the result.",
    "read_permille": "How far the opened document was read, per mille.",
    "page_scroll_permille": "How far the results page was scrolled, per mille.",
    # judgments
    "grade": "The grade (a level of the study's grade scale).",
    "first_grade": "The participant's first grade of the document.",
    "changes": "Times the participant changed the grade.",
    "created_at": "When it was made (ISO 8601, UTC).",
    "updated_at": "When it last changed (ISO 8601, UTC).",
    # attention
    "kind": "What kind of span: hidden (tab), blurred (window) or idle.",
    "start_ms": "Milliseconds from the session's start to the span's start.",
    "duration_ms": "The span's length in milliseconds.",
    # events
    "type": "The event's type (query, document_open, judgment, ...).",
    "client_event_id": "The client's id for the event (stored once per participant).",
    "sequence": "The event's sequence number in the participant's log.",
    "client_time": "The client's clock at the event (ISO 8601).",
    "server_time": "The server's clock when the event was stored (ISO 8601, UTC).",
    "origin": "Who wrote the event: client or server.",
    "payload": "The event's payload as JSON (its data and the server's answer).",
    # qrels
    "version": "The reference version's number.",
    "version_note": "The reference version's note.",
    "version_created_at": "When the reference version was published (ISO 8601, UTC).",
    "version_created_by": "Who published the reference version.",
    "provenance": "The version's provenance as JSON: how its grades came in (the machine rules, sources).",
    "source": "Where the judgment came from (an assessor, an import, a collection's qrels).",
    "judged_by": "Who judged it, by name.",
    # scoring runs
    "run": "The scoring run's number in the package (1-based, in order of creation).",
    "label": "The run's label.",
    "is_default": "1 for the study's default run, else 0.",
    "weights": "sDCG's gain weights per grade (JSON list: grade 0 first).",
    "b": "sDCG's rank discount base b.",
    "bq": "sDCG's query discount base bq.",
    "top": "The ranks read per query (X).",
    "formulation": "The sDCG formulation (2008, kanoulas2011, ...).",
    "gain": "The gain: linear (the weights) or exponential (2^g - 1).",
    "duplicates": "How a document shown again is counted (every, first, ...).",
    "short_lists": "How a list shorter than top is handled (pad, ...).",
    "scan": "How far a list counts as read: fixed (top), observed (marks, clicks), exposure (on screen).",
    "scan_min_visible_ms": "The visible time that counts a result as read, for scan=exposure.",
    "reference_version": "The reference version's number the scores used; empty for participants' grades.",
    "measures": "The other session measures computed (JSON list), or their values (JSON object).",
    "measure_params": "The other measures' parameters (JSON object).",
    "status": "The run's status when packaged.",
    # scores
    "n_queries": "Queries the score read.",
    "length": "Curve positions up to the session's own end.",
    "final": "sDCG at the session's end.",
    "ideal_final": "The ideal session's sDCG at the same length.",
    "normalized_final": "nsDCG: final over ideal_final.",
    "last_query": "nDCG of the session's last query.",
    "best_query": "The best nDCG of any query of the session.",
    "average": "The mean nDCG over the session's queries.",
    "unjudged": "1 when a shown document has no reference judgment, else 0.",
}
# A column only some tables have the same name for: its description in that table.
TABLE_COLUMNS: dict[tuple[str, str], str] = {
    ("participants", "started_at"): "When the participant's study clock started (ISO 8601, UTC).",
    ("participants", "ended_at"): "When the participant reached an ended state (ISO 8601, UTC).",
    ("queries", "results_shown"): "Results shown for the query.",
    ("queries", "documents_opened"): "Documents opened from the query's results.",
    ("qrels", "topic"): "The topic id the judgment is for.",
    ("scores", "end_reason"): "How the session ended.",
    ("scores", "measures"): "The other session measures' values (JSON object).",
    ("scoring_runs", "measures"): "The other session measures computed (JSON list).",
}


def column_description(table: str, column: str) -> str:
    """What a column of `table` holds: the codebook's line; the questionnaires' items are named by their
    prefix (sessions: pre_task.<item>, post_task.<item>; participants: any other column is an item of the
    pre-study questionnaire)."""
    if (table, column) in TABLE_COLUMNS:
        return TABLE_COLUMNS[(table, column)]
    if table == "sessions" and column.startswith(("pre_task.", "post_task.")):
        when, _, item = column.partition(".")
        if item.startswith("score."):
            return f"The {item[6:]} instrument's raw score from the {when.replace('_', '-')} questionnaire."
        return f"The answer to item {item!r} of the {when.replace('_', '-')} questionnaire."
    if column in COLUMNS:
        return COLUMNS[column]
    if table == "participants":
        return f"The answer to item {column.removeprefix('answer_')!r} of the pre-study questionnaire."
    raise KeyError(f"no codebook line for column {column!r} of {table}")
