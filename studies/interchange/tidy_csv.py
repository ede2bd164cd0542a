"""Tidy CSV: one table per level (sessions, queries, shown results, judgments, and what was on screen and
when the participant was away: exposures, attention; a generative system's turns and citations:
turn_tables.py), one row per observation, with the design on every row,
ready for pandas or R; and participants.csv, one row per participant (participants_table.py), first among
TABLE_NAMES.

Design columns, first on every row: study (slug), participant (the pseudonymous code), position (in the
participant's order), scenario (code), topic (the scenario's topic_id), system (code), retake (0/1), practice
(0/1: a practice task, worked first and never scored; docs/latin-square.md).
(participant, position) names a session; no database ids, access tokens or account names are written.
sessions.csv ends with excluded (0/1) and excluded_reason: the study's exclusion rule on agreement with the
reference marks a participant, never drops their rows (docs/recruitment.md, "Checks"), then pre_task_answers
and post_task_answers: the answers to the questions before and after the task, each a JSON object
({item name: answer}, keys sorted), empty when none were given, and gold_passed: 1 or 0 when the
participant judged the scenario's two gold documents (docs/recruitment.md, "Gold documents"), empty when the
task had none; effort_flags and effort_reasons: the task's flags (no_queries, speeder, machine_regular,
unseen_time, below_rules; ";"-separated) and why, against the study's minimum-effort rules
(docs/recruitment.md, "Effort rules and flags"), empty when none; active_s: the session's duration less every
moment the tab was hidden, the window blurred or the participant idle (docs/running-a-study.md, "Exposure and
attention"), empty while it runs. Then one column per item of the questions before the task
(`pre_task.<name>`) and after it (`post_task.<name>`), a choice's "other" text in `<...>.<name>.other`, and
the raw NASA-TLX and SUS scores where the questionnaire holds the instrument (`post_task.score.tlx_raw`,
`post_task.score.sus`; answer_columns.py). Times are ISO 8601 in UTC; empty cells are
missing values. Text cells that a spreadsheet would run as a formula (starting with =, +, -, @, tab or CR) get
a leading ' unless `raw` (docs/file-formats.md).
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

from sessionlab.rounds import in_rounds
from sessionlab.spreadsheet import safe_rows
from studies.interchange.answer_columns import answer_cells, questionnaire_columns
from studies.interchange.participants_table import participant_rows
from studies.interchange.population_note import population_note
from studies.interchange.turn_tables import TURN_TABLES, turn_rows, turns_of
from studies.models import (
    AttentionSpan,
    Event,
    EventOrigin,
    Judgment,
    PageExposure,
    Query,
    Recruitment,
    SearchSession,
    ShownResult,
    Study,
)
from studies.participation.events.exposure import AwaySpan, active_ms
from studies.participation.recruitment.effort import rules_of, session_efforts
from studies.participation.recruitment.effort_flags import effort_flags
from studies.participation.way.form_steps import questionnaire_items
from studies.population import Population, population_q

DESIGN = ["study", "participant", "position", "scenario", "topic", "system", "retake", "practice"]
TABLES = {
    "sessions": DESIGN
    + [
        "started_at",
        "ended_at",
        "end_reason",
        "duration_s",
        "queries",
        "results_shown",
        "documents_opened",
        "judgments",
        "excluded",
        "excluded_reason",
        "pre_task_answers",
        "post_task_answers",
        "gold_passed",
        "effort_flags",
        "effort_reasons",
        "active_s",
    ],
    "queries": DESIGN
    + [
        "query",
        "text",
        "issued_at",
        "seconds_from_start",
        "results_shown",
        "scan_mark_rank",
        "documents_opened",
        "system_message",
        "first_key_ms",
        "formulation_ms",
    ],
    "shown_results": DESIGN + ["query", "rank", "page", "doc", "shown_at", "opened", "participant_grade"],
    "judgments": DESIGN + ["doc", "grade", "first_grade", "changes", "created_at", "updated_at"],
    # What was on screen: a row per shown result that a report said was on screen.
    "exposures": DESIGN
    + [
        "query",
        "page",
        "rank",
        "doc",
        "first_visible_ms",
        "last_visible_ms",
        "visible_ms",
        "max_visible_permille",
        "hover_ms",
        "hovers",
        "read_permille",
        "page_scroll_permille",
    ],
    # When the participant was away: a row per span (tab hidden, window blurred, idle).
    "attention": DESIGN + ["kind", "start_ms", "duration_ms"],
    # A generative system's turns and their citations (turn_tables.py).
    **{name: DESIGN + columns for name, columns in TURN_TABLES.items()},
}
# Every table the downloads write, in order: participants.csv (a row per participant, its columns following
# the study's questionnaire: participants_table.py), then the session-level TABLES.
PARTICIPANTS = "participants"
TABLE_NAMES = [PARTICIPANTS, *TABLES]


def _time(value) -> str:
    return value.isoformat() if value is not None else ""


def _seconds(later, earlier) -> str:
    if later is None or earlier is None:
        return ""
    return f"{(later - earlier).total_seconds():.3f}"


def _answers(answers) -> str:
    """A questionnaire's answers as one cell: a JSON object with sorted keys, or empty when none."""
    if not answers:
        return ""
    return json.dumps(answers, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


# Sessions read per round: each round reads its sessions' queries, shown results, judgments and events, so
# memory holds one round's rows whatever the size of the study.
SESSIONS_PER_CHUNK = 200
SESSION_RELATED = ("assignment__participant", "assignment__scenario", "assignment__system")


def _session_chunks(
    study: Study, chunk_size: int, population: Population | None = None
) -> Iterator[list[SearchSession]]:
    """The study's sessions in table order, `chunk_size` at a time, of the population's participants if one
    is given (studies/population.py). A preview's are never exported (studies/design/lifecycle.py)."""
    sessions = SearchSession.objects.filter(
        assignment__participant__study=study, assignment__participant__preview_at__isnull=True
    ).order_by("assignment__participant__enrolment_index", "assignment__position")
    if population is not None:
        sessions = sessions.filter(population_q(population, "assignment__participant__"))
    yield from in_rounds(sessions, SearchSession.objects.select_related(*SESSION_RELATED), chunk_size)


# The questionnaires whose answers are columns of sessions.csv, after TABLES["sessions"]: (prefix, which).
ANSWER_COLUMNS = (("pre_task.", {"pre_task": True}), ("post_task.", {"post_task": True}))


def _answer_items(study: Study) -> list[tuple[str, list[dict]]]:
    """(prefix, the items participants are asked) per questionnaire of sessions.csv."""
    return [(prefix, questionnaire_items(study=study, **which)) for prefix, which in ANSWER_COLUMNS]


def table_header(*, study: Study, name: str) -> list[str]:
    """The table's header: TABLES[name], and for sessions.csv a column per item of the study's questions
    before and after each task (and their other texts and instrument scores)."""
    if name != "sessions":
        return list(TABLES[name])
    extra = [
        column for prefix, items in _answer_items(study) for column in questionnaire_columns(items, prefix)
    ]
    return TABLES[name] + extra


def table_rows(
    *,
    study: Study,
    name: str,
    chunk_size: int = SESSIONS_PER_CHUNK,
    population: Population | None = None,
    panel_ids: bool = False,
) -> Iterator[list]:
    """The table `name` (header first), row by row, reading the study `chunk_size` sessions at a time: the
    population's sessions, or every session (population None). participants.csv lists every participant
    whatever the population (their state says who a population leaves out; population.txt names them), and
    their panel ids only when `panel_ids` (studies/interchange/panel_ids.py)."""
    if name == PARTICIPANTS:
        yield from participant_rows(study=study, chunk_size=chunk_size, panel_ids=panel_ids)
        return
    yield table_header(study=study, name=name)
    answer_items = dict(_answer_items(study)) if name == "sessions" else {}
    for sessions in _session_chunks(study, chunk_size, population):
        rows = _StudyRows([session.pk for session in sessions], name)
        if name == "sessions":
            rows.flag_sessions(study, sessions)
        for session in sessions:
            key = _design(study, session)
            if name == "sessions":
                answers = answer_cells(
                    answer_items["pre_task."], session.assignment.pre_task_answers
                ) + answer_cells(answer_items["post_task."], session.post_task_answers)
                yield key + rows.session(session) + answers
            elif name == "judgments":
                yield from (key + row for row in rows.judgments_of(session))
            elif name == "attention":
                yield from (key + [s.kind, s.start_ms, s.duration_ms] for s in rows.spans[session.pk])
            elif name in TURN_TABLES:
                yield from (key + row for row in turn_rows(name, rows.turns.get(session.pk, [])))
            for query in (
                rows.queries[session.pk] if name in {"queries", "shown_results", "exposures"} else []
            ):
                if name == "queries":
                    yield key + rows.query(session, query)
                elif name == "exposures":
                    yield from (key + row for row in rows.exposures(query))
                else:
                    yield from (key + row for row in rows.shown_results(session, query))


def study_tables(*, study: Study, panel_ids: bool = False) -> dict[str, list[list]]:
    """{table name: rows (header first)}, whole in memory (for tests and small studies; the downloads stream
    `table_rows`)."""
    return {name: list(table_rows(study=study, name=name, panel_ids=panel_ids)) for name in TABLE_NAMES}


def _design(study: Study, session: SearchSession) -> list:
    """The design columns (DESIGN) of a session's rows."""
    a = session.assignment
    return [
        study.slug,
        a.participant.code,
        a.position,
        a.scenario.code,
        a.scenario.topic_id,
        a.system.code,
        int(a.retake_of_id is not None),
        int(a.scenario.practice),
    ]


class _StudyRows:
    """The sessions' queries, shown results, judgments, opens and gold outcomes, each read in one query, and
    the cells each table takes from them (after the design columns)."""

    def __init__(self, scope: list[int], table: str):
        # Only what `table` writes: the judgments table reads no shown results, the queries one no judgments.
        self.queries = defaultdict(list)
        self.shown = defaultdict(list)
        self.turns = turns_of(scope) if table in TURN_TABLES else {}
        if table not in {"judgments", "attention", *TURN_TABLES}:
            for query in Query.objects.filter(session__in=scope).order_by("session_id", "position"):
                self.queries[query.session_id].append(query)
            for row in (
                ShownResult.objects.filter(query__session__in=scope)
                .select_related("document", "exposure")
                .defer("document__text", "document__title", "document__extra")  # a round holds ids, not texts
                .order_by("query_id", "rank")
            ):
                self.shown[row.query_id].append(row)
        self.judgments = defaultdict(list)
        if table not in {"queries", *TURN_TABLES}:
            judgments = (
                Judgment.objects.filter(session__in=scope)
                .select_related("document")
                .defer("document__text", "document__title", "document__extra")
                .order_by("session_id", "created_at", "id")
            )
            if table == "judgments":
                judgments = judgments.prefetch_related("history")
            for judgment in judgments:
                self.judgments[judgment.session_id].append(judgment)
        self.opened = (
            self._opens(scope)
            if table not in {"judgments", "exposures", "attention", *TURN_TABLES}
            else Counter()
        )
        self.scrolls: dict[tuple[int, int], int] = {}
        if table == "exposures":
            for query_id, page, scroll in PageExposure.objects.filter(query__session__in=scope).values_list(
                "query_id", "page", "scroll_permille"
            ):
                self.scrolls[(query_id, page)] = scroll
        self.spans: defaultdict[int, list[AttentionSpan]] = defaultdict(list)
        if table in {"sessions", "attention"}:
            for span in AttentionSpan.objects.filter(session__in=scope).order_by(
                "session_id", "start_ms", "id"
            ):
                self.spans[span.session_id].append(span)
        self.flags: dict[int, list] = {}
        # The gold documents' outcome per session: the "gold" event's ack (studies/participation/way/gold.py).
        self.gold = (
            {
                session_id: bool(ack.get("passed"))
                for session_id, ack in Event.objects.filter(
                    session__in=scope, type="gold", origin=EventOrigin.SERVER
                )
                .order_by("id")
                .values_list("session_id", "payload__ack")
                if isinstance(ack, dict) and ack.get("ok")
            }
            if table == "sessions"
            else {}
        )

    def flag_sessions(self, study: Study, sessions: list[SearchSession]) -> None:
        """Each session's effort flags (recruitment/effort.py), against the study's rules."""
        rules = rules_of(Recruitment.objects.filter(study=study).first())
        efforts = session_efforts(sessions)
        self.flags = {pk: effort_flags([effort], rules) for pk, effort in efforts.items()}

    def _opens(self, scope) -> Counter:
        """(session, query position, rank) -> opens; also (session, query) and (session,)."""
        # A document shown twice in a list is two rows; an open counts on the row of the rank that was clicked
        # (the event's rank), or on the document's first row when the event names no rank it showed.
        ranks_of: defaultdict[tuple, list[int]] = defaultdict(list)  # (session, query position, doc) -> ranks
        for session_id, session_queries in self.queries.items():
            for query in session_queries:
                for row in self.shown[query.pk]:
                    ranks_of[(session_id, query.position, row.document.external_id)].append(row.rank)
        opened: Counter[tuple] = Counter()
        for session_id, data in Event.objects.filter(
            session__in=scope, type="document_open", payload__ack__ok=True
        ).values_list("session_id", "payload__data"):
            data = data or {}
            ranks = ranks_of.get((session_id, data.get("query"), data.get("doc")), [])
            clicked = data.get("rank")
            rank = clicked if type(clicked) is int and clicked in ranks else (ranks[0] if ranks else None)
            opened[(session_id, data.get("query"), rank)] += 1
            opened[(session_id, data.get("query"))] += 1
            opened[(session_id,)] += 1
        return opened

    def session(self, session: SearchSession) -> list:
        session_queries = self.queries[session.pk]
        participant = session.assignment.participant
        return [
            _time(session.started_at),
            _time(session.ended_at),
            session.end_reason,
            _seconds(session.ended_at, session.started_at),
            len(session_queries),
            sum(len(self.shown[q.pk]) for q in session_queries),
            self.opened[(session.pk,)],
            len(self.judgments[session.pk]),
            # The study's agreement rule's mark (studies/assessment/exclusion.py): kept, marked.
            int(participant.excluded_at is not None),
            participant.excluded_reason or "",
            _answers(session.assignment.pre_task_answers),
            _answers(session.post_task_answers),
            int(self.gold[session.pk]) if session.pk in self.gold else "",
            ";".join(dict.fromkeys(flag.code for flag in self.flags.get(session.pk, []))),
            "; ".join(flag.reason for flag in self.flags.get(session.pk, [])),
            self._active_s(session),
        ]

    def _active_s(self, session: SearchSession) -> str:
        """The session's duration less every moment away (exposure.active_ms); empty while it runs."""
        if session.ended_at is None:
            return ""
        duration_ms = max(0, round((session.ended_at - session.started_at).total_seconds() * 1000))
        spans = [AwaySpan(s.kind, s.start_ms, s.duration_ms) for s in self.spans[session.pk]]
        return f"{active_ms(spans, duration_ms) / 1000:.3f}"

    def exposures(self, query: Query) -> list[list]:
        rows = []
        for row in self.shown[query.pk]:
            exposure = getattr(row, "exposure", None)  # none when no report said it was on screen
            if exposure is not None:
                rows.append(
                    [
                        query.position,
                        row.page,
                        row.rank,
                        row.document.external_id,
                        "" if exposure.first_visible_ms is None else exposure.first_visible_ms,
                        "" if exposure.last_visible_ms is None else exposure.last_visible_ms,
                        exposure.visible_ms,
                        exposure.max_permille,
                        exposure.hover_ms,
                        exposure.hovers,
                        "" if exposure.read_permille is None else exposure.read_permille,
                        self.scrolls.get((query.pk, row.page), ""),
                    ]
                )
        return rows

    def query(self, session: SearchSession, query: Query) -> list:
        return [
            query.position,
            query.text,
            _time(query.issued_at),
            _seconds(query.issued_at, session.started_at),
            len(self.shown[query.pk]),
            query.scan_mark_rank if query.scan_mark_rank is not None else "",
            self.opened[(session.pk, query.position)],
            query.system_message,
            "" if query.first_key_ms is None else query.first_key_ms,
            "" if query.formulation_ms is None else query.formulation_ms,
        ]

    def shown_results(self, session: SearchSession, query: Query) -> list[list]:
        grades = {j.document.external_id: j.grade for j in self.judgments[session.pk]}
        return [
            [
                query.position,
                row.rank,
                row.page,
                row.document.external_id,
                _time(row.shown_at),
                self.opened.get((session.pk, query.position, row.rank), 0),
                grades.get(row.document.external_id, ""),
            ]
            for row in self.shown[query.pk]
        ]

    def judgments_of(self, session: SearchSession) -> list[list]:
        rows = []
        for judgment in self.judgments[session.pk]:
            history = list(judgment.history.all())
            rows.append(
                [
                    judgment.document.external_id,
                    judgment.grade,
                    history[0].grade if history else judgment.grade,
                    max(len(history) - 1, 0),
                    _time(judgment.created_at),
                    _time(judgment.updated_at),
                ]
            )
        return rows


def table_csv_lines(rows: Iterable[list], *, raw: bool = False) -> Iterator[str]:
    """The rows as CSV lines; text cells a spreadsheet would run as a formula get a leading ' unless `raw`
    (sessionlab/spreadsheet.py)."""
    # Rows end with "\n", but the writer is told "\r\n": only then does it quote a cell holding a CR, which
    # written bare split its row in two when read back.
    line = io.StringIO()
    writer = csv.writer(line, lineterminator="\r\n")
    for row in safe_rows(rows, raw=raw):
        line.seek(0)
        line.truncate()
        writer.writerow(row)
        yield line.getvalue()[:-2] + "\n"


def table_csv(rows: Iterable[list], *, raw: bool = False) -> str:
    """The rows as one CSV text (table_csv_lines)."""
    return "".join(table_csv_lines(rows, raw=raw))


def write_study_csv(
    *,
    study: Study,
    directory: str | Path,
    raw: bool = False,
    population: Population | None = None,
    panel_ids: bool = False,
) -> list[Path]:
    """Write each table of TABLE_NAMES (participants.csv, sessions.csv ... attention.csv) into `directory`
    (spreadsheet-safe cells unless `raw`), the population's sessions (every session if None), and
    population.txt saying which; the panel ids only when `panel_ids`."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in TABLE_NAMES:
        path = directory / f"{name}.csv"
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(
                table_csv_lines(
                    table_rows(study=study, name=name, population=population, panel_ids=panel_ids), raw=raw
                )
            )
        paths.append(path)
    note = directory / "population.txt"
    note.write_text(population_note(study, population), encoding="utf-8")
    return [*paths, note]
