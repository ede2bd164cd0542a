"""The panel's status notifications (the endpoint) and its submissions export (a CSV file): each applied once
by its key; a return or a time-out ends a participant who has not ended (their row is freed)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from studies.errors import RecruitmentError
from studies.kernel.states import state_of
from studies.models import (
    ENDED_STATES,
    PanelNotification,
    Participant,
    ParticipantState,
    Recruitment,
    Study,
)
from studies.participation.recruitment.panels import PANEL_ID_TEXT, panel_id_canonical, panel_id_lookup
from studies.participation.recruitment.states import participant_sessions_end, participant_state_set

PANEL_STATUS_NAMES = {
    # The endpoint's and the exports' spellings, all to ours.
    "returned": "returned",
    "timed_out": "timed_out",
    "timed-out": "timed_out",
    "timedout": "timed_out",
    "approved": "approved",
    "rejected": "rejected",
    "awaiting review": "awaiting_review",
    "awaiting_review": "awaiting_review",
    "submitted": "awaiting_review",
    "active": "active",
    "screened-out": "screened_out",
    "screened out": "screened_out",
    "screened_out": "screened_out",
}
# Which panel statuses end our participant, and which are the panel's verdict on a completed one.
PANEL_ENDS = {"returned": ParticipantState.RETURNED, "timed_out": ParticipantState.TIMED_OUT}
# The panel statuses after which the participant will not come back: their open sessions end ("left").
PANEL_LEAVES = frozenset({"returned", "timed_out", "rejected"})


def status_time_error(study: Study, sent_at: datetime | None, now: datetime | None = None) -> str:
    """Why a panel status's time is refused ("" when it is not): more than PANEL_STATUS_MAX_FUTURE_SECONDS
    ahead of the server's clock, or before the study was created. Such a time must never be stored as the
    newest (every later real status would read as older and be ignored)."""
    if sent_at is None:
        return ""
    now = now or timezone.now()
    ahead = timedelta(seconds=settings.PANEL_STATUS_MAX_FUTURE_SECONDS)
    if sent_at > now + ahead:
        return (
            f"{sent_at.isoformat()} is more than {settings.PANEL_STATUS_MAX_FUTURE_SECONDS} s ahead of "
            "the server's clock"
        )
    if study.created_at is not None and sent_at < study.created_at:
        return f"{sent_at.isoformat()} is before the study was created"
    return ""


def _study_panel(study: Study) -> str:
    return Recruitment.objects.filter(study=study).values_list("panel", flat=True).first() or "generic"


def _apply(participant: Participant, status: str, sent_at: datetime | None) -> str:
    """The panel's word, stored; a return or a time-out ends the participant, and a return, a time-out or a
    rejection ends their open sessions ("left"). Returns their state."""
    participant.panel_status, participant.panel_status_at = status, sent_at or timezone.now()
    participant.save(update_fields=["panel_status", "panel_status_at"])
    ends = PANEL_ENDS.get(status)
    if ends and state_of(participant) not in ENDED_STATES:
        participant_state_set(participant=participant, state=ends, reason=f"panel: {status}")
    if status in PANEL_LEAVES:
        participant_sessions_end(
            participant=participant,
            at=timezone.now(),
            marker=f"server-panel-{status}",
            data={"reason": "left", "by": "panel", "panel_status": status},
        )
    return state_of(participant)


def panel_status_record(
    *,
    study: Study,
    key: str,
    panel_id: str,
    status: str,
    sent_at: datetime | None = None,
    source: str = "endpoint",
) -> dict:
    """Apply one status notification of the panel, once by `key` (a replay answers what the first did).

    A return or a time-out ends a participant who has not ended (their row is freed); approved and rejected
    are recorded as the panel's word; a return, a time-out or a rejection also ends their open sessions
    ("left"). A notification older than the one applied last (out of order) is kept and answered but changes
    nothing. The panel id is folded as the study's panel writes it (panel_id_canonical); a time outside the
    window around the server's clock (status_time_error) is refused (RecruitmentError) and stores nothing.
    Returns the outcome {"participant", "status", "applied", "note"}."""
    known = PANEL_STATUS_NAMES.get(status.strip().lower()) if isinstance(status, str) else None
    if known is None:
        raise RecruitmentError(
            "status must be one of returned, timed_out, approved, rejected, awaiting_review, "
            "active, screened_out"
        )
    status = known
    if refused := status_time_error(study, sent_at):
        raise RecruitmentError(f"time: {refused}")
    panel = _study_panel(study)
    panel_id = panel_id_canonical(panel, panel_id)
    stored = PanelNotification.objects.filter(study=study, key=key).first()
    if stored is not None:
        return {**stored.outcome, "replayed": True}
    with transaction.atomic():
        participant = (
            Participant.objects.select_for_update()
            .filter(study=study, **panel_id_lookup(panel, panel_id))
            .first()
        )
        outcome = {
            "participant": participant.code if participant else None,
            "status": status,
            "applied": False,
            "note": "",
        }
        if participant is None:
            outcome["note"] = "no participant with this panel id"
        elif (
            sent_at is not None
            and participant.panel_status_at is not None
            and sent_at < participant.panel_status_at
            # A newest time stored before the window existed (a year 9999) no longer blocks every later one.
            and not status_time_error(study, participant.panel_status_at)
        ):
            outcome["note"] = "older than the status applied last: kept, not applied"
        else:
            outcome["state"] = _apply(participant, status, sent_at)
            outcome["applied"] = True
        try:
            with transaction.atomic():
                PanelNotification.objects.create(
                    study=study,
                    key=key,
                    participant=participant,
                    panel_id=panel_id,
                    status=status,
                    sent_at=sent_at,
                    source=source,
                    outcome=outcome,
                )
        except IntegrityError:
            # The same notification at the same moment: the first one's answer (and nothing applied twice).
            transaction.set_rollback(True)
            stored = PanelNotification.objects.filter(study=study, key=key).first()
            return {**(stored.outcome if stored else outcome), "replayed": True}
    return outcome


# Column names of the panels' exports, lower-cased: Prolific's submissions export, MTurk's batch results, and
# a generic two-column file.
_EXPORT_ID = ("participant id", "participant_id", "workerid", "pid")
_EXPORT_STATUS = ("status", "assignmentstatus")
_EXPORT_SUBMISSION = ("submission id", "submission_id", "assignmentid")
_EXPORT_TIME = ("completed at", "completed_date_time", "submittime", "started at")
MAX_IMPORT_BYTES = 5_000_000


@dataclass
class ImportResult:
    rows: int
    applied: int
    replayed: int


def panel_export_import(*, study: Study, text: str) -> ImportResult:
    """Import the panel's submissions export (CSV): every row checked first, then all applied in one
    transaction, or none with every error named by line and field (RecruitmentError.errors)."""
    if len(text) > MAX_IMPORT_BYTES:
        raise RecruitmentError(f"the file is larger than {MAX_IMPORT_BYTES // 1_000_000} MB")
    if "\x00" in text:
        raise RecruitmentError("line 1: the file holds a NUL character; is it a CSV file?")
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    columns = _ExportColumns.read(reader)
    errors: list[str] = []
    parsed = []
    panel, now = _study_panel(study), timezone.now()
    try:
        for line, row in enumerate(reader, start=2):
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(columns.header):
                errors.append(f"line {line}: {len(row)} fields, the header has {len(columns.header)}")
                continue
            row_errors, (panel_id, status, sent_at, submission) = columns.row(study, row, now)
            errors += [f"line {line}, {problem}" for problem in row_errors]
            parsed.append((panel_id_canonical(panel, panel_id), status, sent_at, submission))
    except csv.Error as error:
        errors.append(f"line {reader.line_num}: {error}")
    if errors:
        raise RecruitmentError(
            "the export was not imported: "
            + "; ".join(errors[:20])
            + (f"; and {len(errors) - 20} more" if len(errors) > 20 else ""),
            errors=errors,
        )
    applied = replayed = 0
    with transaction.atomic():
        for panel_id, status, sent_at, submission in parsed:
            key = f"import:{panel_id}:{submission}:{PANEL_STATUS_NAMES[status.lower()]}"
            outcome = panel_status_record(
                study=study, key=key, panel_id=panel_id, status=status, sent_at=sent_at, source="import"
            )
            replayed += bool(outcome.get("replayed"))
            applied += bool(outcome.get("applied")) and not outcome.get("replayed")
    return ImportResult(len(parsed), applied, replayed)


@dataclass
class _ExportColumns:
    """Where a panel export's header puts the columns the import reads."""

    header: list[str]
    id_col: int
    status_col: int
    submission_col: int | None
    time_col: int | None

    @classmethod
    def read(cls, reader) -> _ExportColumns:
        try:
            header = [name.strip().lower() for name in next(reader)]
        except StopIteration:
            raise RecruitmentError("the file is empty") from None
        except csv.Error as error:
            raise RecruitmentError(f"line 1: {error}") from None

        def column(names):
            return next((header.index(name) for name in names if name in header), None)

        id_col, status_col = column(_EXPORT_ID), column(_EXPORT_STATUS)
        missing = [
            label for label, col in (("participant id", id_col), ("status", status_col)) if col is None
        ]
        if id_col is None or status_col is None:
            raise RecruitmentError(
                f"line 1: no {' and no '.join(missing)} column (found: {', '.join(header)[:300]})"
            )
        return cls(header, id_col, status_col, column(_EXPORT_SUBMISSION), column(_EXPORT_TIME))

    def row(self, study: Study, row: list[str], now) -> tuple[list[str], tuple]:
        """(problems, each naming its field; (panel id, status, time or None, submission id))."""
        errors = []
        panel_id, status = row[self.id_col].strip(), row[self.status_col].strip()
        if not PANEL_ID_TEXT.fullmatch(panel_id):
            errors.append(f"{self.header[self.id_col]}: not a participant id")
        if PANEL_STATUS_NAMES.get(status.lower()) is None:
            errors.append(f"{self.header[self.status_col]}: unknown status {status[:40]!r}")
        sent_at = None
        if self.time_col is not None and row[self.time_col].strip():
            sent_at, refused = self._time(study, row[self.time_col].strip(), now)
            if refused:
                errors.append(f"{self.header[self.time_col]}: {refused}")
        submission = row[self.submission_col].strip() if self.submission_col is not None else ""
        return errors, (panel_id, status, sent_at, submission)

    @staticmethod
    def _time(study: Study, text: str, now) -> tuple:
        """(the time or None, why it is refused or None)."""
        try:
            sent_at = parse_datetime(text.replace(" ", "T", 1))
        except ValueError:
            sent_at = None
        if sent_at is None:
            return None, "not a date and time"
        if timezone.is_naive(sent_at):
            sent_at = timezone.make_aware(sent_at, UTC)
        return sent_at, status_time_error(study, sent_at, now)
