"""Per-participant completion codes (docs/recruitment.md, "Code modes"): a code generated for each completer,
or one from a pool the researcher uploaded, handed out once by a conditional UPDATE (two completers never take
one code); and the panel's typed codes matched against them."""

from __future__ import annotations

import csv
import io
import re
import secrets
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone

from studies.errors import RecruitmentError
from studies.models import (
    AuditAction,
    AuditEntry,
    CompletionCode,
    Participant,
    ParticipantState,
    Recruitment,
    Study,
)
from studies.participation.recruitment.panels import PANEL_ID_TEXT

CODE_TEXT = re.compile(r"[A-Za-z0-9_-]{1,40}")
# Capitals and digits without the ones read alike (0/O, 1/I): 32 letters, 12 of them are 60 bits.
CODE_ALPHABET = "".join(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ23456789" if c not in "IO")
GENERATED_LENGTH = 12
MAX_POOL_LINES = 100_000
# Two completers racing for the pool's first free code: the loser tries the next one, this many times.
TAKE_TRIES = 20
POOL_EMPTY = (
    "The study has run out of completion codes. Your work is saved: please keep this page open or come back "
    "to this link later, or contact the researcher with your participant code {code}."
)


def new_participant_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(GENERATED_LENGTH))


def code_held(participant: Participant) -> str | None:
    return CompletionCode.objects.filter(participant=participant).values_list("code", flat=True).first()


def completion_code_take(*, participant: Participant, recruitment: Recruitment) -> str | None:
    """The participant's own completed code, handed out on first call (idempotent): generated, or the pool's
    oldest free code. None when the pool is empty (POOL_EMPTY says what to tell them)."""
    held = code_held(participant)
    if held is not None or recruitment.code_mode == "study":
        return held
    for _ in range(TAKE_TRIES):
        try:
            with transaction.atomic():
                code = _take_one(participant, recruitment)
        except IntegrityError:  # the same participant's other request took one, or a generated code repeated
            held = code_held(participant)
            if held is not None:
                return held
            continue
        if code != "":
            return code
    return code_held(participant)


def _take_one(participant: Participant, recruitment: Recruitment) -> str | None:
    """One try: "" when another completer took the free code first (try again), None when none is free."""
    now = timezone.now()
    if recruitment.code_mode == "per_participant":
        code = new_participant_code()
        CompletionCode.objects.create(
            study_id=participant.study_id,
            code=code,
            participant=participant,
            source="generated",
            handed_out_at=now,
        )
        return code
    free = first_free_code(participant.study_id)
    if free is None:
        return None
    # The hand-out: one conditional UPDATE; a completer who lost the race to this code updates 0 rows.
    taken = CompletionCode.objects.filter(pk=free[0], participant__isnull=True).update(
        participant=participant, handed_out_at=now
    )
    return free[1] if taken else ""


def first_free_code(study_id: int) -> tuple[int, str] | None:
    """(id, code) of the pool's oldest free code; by the time it is taken another completer may have it."""
    return (
        CompletionCode.objects.filter(study_id=study_id, source="pool", participant__isnull=True)
        .order_by("id")
        .values_list("pk", "code")
        .first()
    )


def pool_counts(study: Study) -> tuple[int, int]:
    """(free, handed out) codes of the study's pool."""
    pool = CompletionCode.objects.filter(study=study, source="pool")
    free = pool.filter(participant__isnull=True).count()
    return free, pool.count() - free


def completion_pool_add(*, study: Study, text: str) -> int:
    """Add the codes of `text` (one a line, or the first column of a CSV) to the study's pool; all or
    nothing: RecruitmentError lists each bad line (line number and why). Returns how many were added."""
    recruitment = Recruitment.objects.filter(study=study).first()
    taken = set(CompletionCode.objects.filter(study=study).values_list("code", flat=True))
    if recruitment is not None:
        taken |= {recruitment.code_completed, recruitment.code_screened_out, recruitment.code_failed_checks}
    codes: dict[str, int] = {}
    errors = []
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if number > MAX_POOL_LINES:
            errors.append(f"more than {MAX_POOL_LINES} lines")
            break
        code = row[0].strip() if row else ""
        if not code or (number == 1 and code.lower() == "code"):
            continue
        if not CODE_TEXT.fullmatch(code):
            errors.append(f"line {number}, code: 1..40 letters, digits, _ or - ({code[:50]!r})")
        elif code in codes:
            errors.append(f"line {number}, code: {code} again (line {codes[code]})")
        elif code in taken:
            errors.append(f"line {number}, code: {code} is already this study's (the pool or a study code)")
        codes.setdefault(code, number)
    if errors:
        raise RecruitmentError("; ".join(errors[:5]), errors=errors)
    if not codes:
        raise RecruitmentError("no codes: one a line")
    with transaction.atomic():
        CompletionCode.objects.bulk_create(CompletionCode(study=study, code=c, source="pool") for c in codes)
        AuditEntry.objects.create(
            study=study, action=AuditAction.RECRUITMENT_CHANGED, detail={"pool_codes_added": len(codes)}
        )
    return len(codes)


@dataclass(frozen=True)
class TypedCode:
    """One participant's code as the panel has it. match: right | other_participant | study_code | unknown |
    missing | no_participant."""

    line: int | None
    panel_id: str
    participant_code: str | None
    typed: str
    match: str
    reason: str


def typed_codes_parse(text: str) -> list[tuple[int, str, str]]:
    """(line, panel id, code) per line of "worker id, code" (a header line is skipped); RecruitmentError lists
    each bad line with its field."""
    rows: list[tuple[int, str, str]] = []
    errors: list[str] = []
    seen: dict[str, int] = {}
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        cells = [cell.strip() for cell in row]
        if not any(cells):
            continue
        if number == 1 and cells[0].lower() in ("workerid", "worker_id", "participant_id", "pid", "panel_id"):
            continue
        if len(cells) > 2:
            errors.append(f"line {number}: two columns, the worker id and the code ({len(cells)} found)")
            continue
        panel_id, code = cells[0], cells[1] if len(cells) > 1 else ""
        if not PANEL_ID_TEXT.fullmatch(panel_id):
            errors.append(f"line {number}, worker id: 1..64 letters, digits or _.:- ({panel_id[:50]!r})")
        elif panel_id in seen:
            errors.append(f"line {number}, worker id: {panel_id} again (line {seen[panel_id]})")
        elif code and not CODE_TEXT.fullmatch(code):
            errors.append(f"line {number}, code: 1..40 letters, digits, _ or - ({code[:50]!r})")
        else:
            seen[panel_id] = number
            rows.append((number, panel_id, code))
    if errors:
        raise RecruitmentError("; ".join(errors[:5]), errors=errors)
    return rows


def typed_codes_match(*, study: Study, text: str) -> list[TypedCode]:
    """Each code the panel's workers typed, matched: their own code (right), another participant's, the
    study's code where each has their own, unknown; then every participant who completed here but is in no
    line (missing). Refuses the whole text, line by line, when a line is bad (RecruitmentError)."""
    lines = typed_codes_parse(text)
    recruitment = Recruitment.objects.filter(study=study).first()
    participants = {
        p.panel_id or "": p for p in Participant.objects.filter(study=study, panel_id__isnull=False)
    }
    owners = dict(
        CompletionCode.objects.filter(study=study, participant__isnull=False).values_list(
            "code", "participant__panel_id"
        )
    )
    study_codes = (
        {}
        if recruitment is None
        else {
            recruitment.code_completed: "completed",
            recruitment.code_screened_out: "screened_out",
            recruitment.code_failed_checks: "failed_checks",
        }
    )
    own_codes = {panel_id: code for code, panel_id in owners.items()}
    matched = [_match(line, participants, owners, own_codes, study_codes) for line in lines]
    typed_ids = {panel_id for _, panel_id, _ in lines}
    for panel_id, participant in sorted(participants.items()):
        if panel_id not in typed_ids and participant.state == ParticipantState.COMPLETED:
            matched.append(
                TypedCode(None, panel_id, participant.code, "", "missing", "completed here, no code typed")
            )
    return matched


def _match(line, participants, owners, own_codes, study_codes) -> TypedCode:
    number, panel_id, typed = line
    participant = participants.get(panel_id)
    code = participant.code if participant else None
    own = own_codes.get(panel_id)
    state = participant.state if participant else None
    if participant is None:
        return TypedCode(
            number, panel_id, None, typed, "no_participant", "no participant of ours has this id"
        )
    if not typed:
        return TypedCode(number, panel_id, code, typed, "missing", f"no code typed ({state} here)")
    if typed == own:
        return TypedCode(number, panel_id, code, typed, "right", "their own code")
    if typed in owners:
        return TypedCode(
            number, panel_id, code, typed, "other_participant", f"the code of {owners[typed]}, not theirs"
        )
    outcome = study_codes.get(typed)
    if outcome is not None and own is None and _study_outcome(participant) == outcome:
        return TypedCode(number, panel_id, code, typed, "right", f"the study's {outcome} code")
    if outcome is not None:
        return TypedCode(
            number,
            panel_id,
            code,
            typed,
            "study_code",
            f"the study's {outcome} code, but they are {state} here"
            + (" and hold their own code" if own else ""),
        )
    return TypedCode(number, panel_id, code, typed, "unknown", "not a code of this study")


def _study_outcome(participant: Participant) -> str | None:
    if participant.state == ParticipantState.COMPLETED:
        return "completed"
    if participant.state == ParticipantState.SCREENED_OUT:
        return (
            "failed_checks"
            if (participant.state_reason or "").startswith("failed checks")
            else "screened_out"
        )
    return None
