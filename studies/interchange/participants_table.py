"""participants.csv: one row per participant, beside the session-level tables of tidy_csv.py.

Columns (PARTICIPANT_COLUMNS), then the pre-study questionnaire's answers, one column per item:
- study (slug), participant (the pseudonymous code), enrolment_index (0-based order of enrolment),
  plan_row (the Latin-square row of the assignment plan they work: their own index unless re-issued),
  reissue_of (the code of the participant whose freed row they re-use, empty otherwise);
- state (invited, started, active, completed, returned, timed_out, screened_out, withdrawn), state_reason,
  state_changed_at;
- consent_version, consented_at, declined_at, withdrawn_at; enrolled_at (the row's creation), started_at
  (the study clock: their first act or public-link arrival), ended_at (when they reached an ended state:
  completed, returned, timed out, screened out, withdrawn; empty while in the study);
- sessions (tasks started), sessions_ended;
- panel (the study's panel, for a participant who came by the public link with a panel id; empty for one
  the researcher enrolled), panel_id, panel_study_id, panel_session_id (only when asked for by name:
  panel_ids.py), panel_status (the panel's last word: approved, returned, ...), panel_status_at;
- excluded (0/1), excluded_by (manual: a researcher on the replay page; rule: the study's agreement rule),
  excluded_at, excluded_reason, excluded_agreement (the rule's figure).

The questionnaire's columns are named by item name, in the questionnaire's order, then any other name found
in the answers (sorted); a name that is one of the columns above gets the prefix `answer_`. A scalar answer
is written as it is, a list or object as compact JSON. A preview participant is never written
(studies/design/lifecycle.py). docs/file-formats.md, "Tidy CSV".
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from django.db.models import Count, Q

from sessionlab.rounds import in_rounds
from studies.design.rows import plan_row_of
from studies.interchange.panel_ids import PANEL_ID_FIELDS
from studies.kernel.states import state_of
from studies.models import ENDED_STATES, Participant, Recruitment, Study

PARTICIPANT_COLUMNS = [
    "study",
    "participant",
    "enrolment_index",
    "plan_row",
    "reissue_of",
    "state",
    "state_reason",
    "state_changed_at",
    "consent_version",
    "consented_at",
    "declined_at",
    "withdrawn_at",
    "enrolled_at",
    "started_at",
    "ended_at",
    "sessions",
    "sessions_ended",
    "panel",
    "panel_id",
    "panel_study_id",
    "panel_session_id",
    "panel_status",
    "panel_status_at",
    "excluded",
    "excluded_by",
    "excluded_at",
    "excluded_reason",
    "excluded_agreement",
]
ANSWER_PREFIX = "answer_"  # before an item name that is one of PARTICIPANT_COLUMNS
PARTICIPANTS_PER_CHUNK = 500


def _time(value) -> str:
    return value.isoformat() if value is not None else ""


def _text(value) -> str:
    return "" if value is None else value


def _answer(value):
    """An answer as one cell: a scalar as it is (numbers stay numbers), a list or object as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, list | dict):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return value


def _exported(study: Study):
    return Participant.objects.filter(study=study, preview_at__isnull=True)


def answer_names(study: Study) -> list[str]:
    """The pre-study questionnaire's item names in its order, then any other name the answers hold (sorted):
    the answer columns, before any prefix."""
    names = [
        item["name"]
        for item in (study.questionnaire or [])
        if isinstance(item, dict) and isinstance(item.get("name"), str)
    ]
    answered: set[str] = set()
    for answers in (
        _exported(study).exclude(questionnaire_answers={}).values_list("questionnaire_answers", flat=True)
    ):
        if isinstance(answers, dict):
            answered.update(str(key) for key in answers)
    return list(dict.fromkeys(names)) + sorted(answered - set(names))


def answer_column(name: str) -> str:
    # Against every column, the panel ids' too when they are left out: no answer reads as a panel id column.
    return ANSWER_PREFIX + name if name in PARTICIPANT_COLUMNS else name


def participant_columns(*, panel_ids: bool = False) -> list[str]:
    """PARTICIPANT_COLUMNS, the panel ids left out unless `panel_ids` (the file is shared: panel_ids.py)."""
    return [c for c in PARTICIPANT_COLUMNS if panel_ids or c not in PANEL_ID_FIELDS]


def participant_rows(
    *, study: Study, chunk_size: int = PARTICIPANTS_PER_CHUNK, panel_ids: bool = False
) -> Iterator[list]:
    """participants.csv (header first), row by row, `chunk_size` participants a query; the panel ids only
    when `panel_ids` (the owner asked for them by name)."""
    names = answer_names(study)
    kept = [index for index, c in enumerate(PARTICIPANT_COLUMNS) if panel_ids or c not in PANEL_ID_FIELDS]
    yield participant_columns(panel_ids=panel_ids) + [answer_column(name) for name in names]
    recruitment = Recruitment.objects.filter(study=study).first()
    panel = recruitment.panel if recruitment is not None else ""
    chosen = _exported(study).order_by("enrolment_index")
    rows = Participant.objects.select_related("reissue_of").annotate(
        session_count=Count("assignments__session"),
        ended_count=Count("assignments__session", filter=Q(assignments__session__ended_at__isnull=False)),
    )
    for participants in in_rounds(chosen, rows, chunk_size):
        for p in participants:
            state = state_of(p)
            answers = p.questionnaire_answers if isinstance(p.questionnaire_answers, dict) else {}
            excluded_by = "manual" if p.excluded_manually else ("rule" if p.excluded_at is not None else "")
            row = [
                study.slug,
                p.code,
                p.enrolment_index,
                plan_row_of(p),
                p.reissue_of.code if p.reissue_of is not None else "",
                state,
                _text(p.state_reason),
                _time(p.state_changed_at),
                p.consent_version,
                _time(p.consented_at),
                _time(p.declined_at),
                _time(p.withdrawn_at),
                _time(p.created_at),
                _time(p.started_at),
                _time(p.state_changed_at) if state in ENDED_STATES else "",
                p.session_count,
                p.ended_count,
                panel if p.panel_id else "",
                _text(p.panel_id),
                _text(p.panel_study_id),
                _text(p.panel_session_id),
                _text(p.panel_status),
                _time(p.panel_status_at),
                int(p.excluded_at is not None),
                excluded_by,
                _time(p.excluded_at),
                _text(p.excluded_reason),
                "" if p.excluded_agreement is None else p.excluded_agreement,
            ]
            yield [row[index] for index in kept] + [_answer(answers.get(name)) for name in names]
