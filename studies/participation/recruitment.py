"""Recruitment and attrition: the participant's state, the public link, the study-level time limit and its
sweep, completion codes, the panel's status notifications (docs/recruitment.md).

A participant's state is one of PARTICIPANT_STATES. Three are derived from their rows and move on by
themselves (invited -> started -> active); five are where they end: completed (every scenario worked and
answered), withdrawn (a withdrawal, or declining consent), and three that free their plan row for the next
arrival: returned (the panel says so), timed out (the study-level time limit, this module's sweep),
screened out (a failed check). Only withdrawn follows another ending (completed or not: the data are gone).
Every change is one conditional UPDATE (two requests cannot both make it) and one AuditEntry.
"""

from __future__ import annotations

import csv
import io
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urlencode

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from studies.design.latin_square import participant_assignment, row_to_issue
from studies.design.lifecycle import OPEN, PARTICIPANT_MESSAGES, status_of
from studies.errors import DesignError, RecruitmentError, Refused
from studies.models import (
    Assignment,
    AuditEntry,
    PanelNotification,
    Participant,
    Recruitment,
    SearchSession,
    Study,
)
from studies.participation.rules import (
    ENDED_WITHOUT_DATA,
    TIME_LIMIT_GRACE,
    client_id_check,
    deadline_at,
    event_create,
    participant_check_consented,
    session_expire_if_due,
    sessions_changed,
)

INVITED, STARTED, ACTIVE, COMPLETED = "invited", "started", "active", "completed"
RETURNED, TIMED_OUT, SCREENED_OUT, WITHDRAWN = "returned", "timed_out", "screened_out", "withdrawn"
# States a participant ends in; and those of them that free the plan row for the next arrival.
ENDED = frozenset({COMPLETED, RETURNED, TIMED_OUT, SCREENED_OUT, WITHDRAWN})
FREEING = frozenset({RETURNED, TIMED_OUT, SCREENED_OUT, WITHDRAWN})
# What a participant who ended that way reads if they open their link again (rules refuses their actions).
ENDED_MESSAGES = ENDED_WITHOUT_DATA


def state_of(participant: Participant) -> str:
    return participant.state or INVITED


def plan_row_of(participant: Participant) -> int:
    return participant.enrolment_index if participant.plan_row is None else participant.plan_row


# --- the panels ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Panel:
    """A panel's URL parameters and its completion URL ("{code}": the participant's completion code)."""

    name: str
    id_param: str
    study_param: str | None
    session_param: str | None
    id_pattern: re.Pattern
    completion_url: str


PANEL_ID_TEXT = _TOKEN = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
PANELS = {
    # Prolific ids are 24 hex digits; its completion URL takes the code as ?cc=.
    "prolific": Panel(
        "Prolific",
        "PROLIFIC_PID",
        "STUDY_ID",
        "SESSION_ID",
        re.compile(r"[0-9a-fA-F]{24}"),
        "https://app.prolific.com/submissions/complete?cc={code}",
    ),
    # MTurk worker ids are capitals and digits; the HIT is submitted by a form posted to the turkSubmitTo the
    # arrival carried (mturk_submit_to_from_query), else by the worker pasting the code.
    "mturk": Panel("MTurk", "workerId", "hitId", "assignmentId", re.compile(r"[A-Z0-9]{1,64}"), ""),
    "generic": Panel("Generic pool", "pid", None, None, _TOKEN, ""),
}


@dataclass(frozen=True)
class PanelIds:
    panel_id: str
    study_id: str | None = None
    session_id: str | None = None
    submit_to: str | None = None  # MTurk's turkSubmitTo, one of settings.MTURK_SUBMIT_HOSTS


# MTurk's assignmentId while the worker previews the HIT (has not accepted it): no worker id, nobody to create.
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"


def mturk_preview(panel: str, query: Mapping[str, str]) -> bool:
    """Whether the public link was opened in MTurk's preview of the HIT (show the study, create nobody)."""
    return panel == "mturk" and query.get("assignmentId") == MTURK_PREVIEW


def mturk_submit_hosts() -> tuple[str, ...]:
    from django.conf import settings

    return tuple(settings.MTURK_SUBMIT_HOSTS)


def mturk_frame_ancestors() -> str:
    """The frame-ancestors sources of the MTurk arrival landing: MTurk's hosts (settings.MTURK_FRAME_ANCESTORS),
    nothing from the request."""
    from django.conf import settings

    return " ".join(settings.MTURK_FRAME_ANCESTORS)


# MTurk's parameters, carried unchanged from the landing inside MTurk's frame to the study's own tab.
MTURK_PARAMS = ("assignmentId", "hitId", "turkSubmitTo", "workerId")


def mturk_tab_query(query: Mapping[str, str]) -> str:
    """The query string of the link that opens the study in a tab of its own: MTurk's parameters as they came
    (already checked by panel_ids_from_query), nothing else."""
    return urlencode([(name, query[name]) for name in MTURK_PARAMS if query.get(name)])


def mturk_submit_to_from_query(query: Mapping[str, str]) -> str | None:
    """MTurk's turkSubmitTo from the URL: None when absent (the code is then pasted), the host when it is
    exactly one of the allow-list (settings.MTURK_SUBMIT_HOSTS: production and the sandbox), Refused for
    anything else. Compared as a whole string, never parsed: the completion page posts the worker's data
    there, so a look-alike (https://www.mturk.com.evil.example, https://www.mturk.com@evil) is refused."""
    raw = query.get("turkSubmitTo", "")
    if not raw:
        return None
    value = raw[:-1] if isinstance(raw, str) and raw.endswith("/") else raw
    if value not in mturk_submit_hosts():
        raise Refused("turkSubmitTo is not MTurk's (www.mturk.com or workersandbox.mturk.com).")
    return value


def mturk_submit_url(host: str | None) -> str:
    """The externalSubmit address for an allowed turkSubmitTo; "" for anything else (checked again on use)."""
    return f"{host}/mturk/externalSubmit" if host and host in mturk_submit_hosts() else ""


def panel_ids_from_query(panel: str, query: Mapping[str, str]) -> PanelIds:
    """The panel's identifiers from the public link's query string; Refused (with the parameter's name) for
    one missing or malformed. MTurk's preview (ASSIGNMENT_ID_NOT_AVAILABLE) is refused: nobody accepted yet
    (the public link shows the study instead, mturk_preview); MTurk's turkSubmitTo outside the allow-list too."""
    preset = PANELS[panel]
    raw = query.get(preset.id_param, "")
    if not raw:
        raise Refused(
            f"This link needs the panel's participant id ({preset.id_param}); please open it from the "
            f"{preset.name} page."
        )
    if not isinstance(raw, str) or not preset.id_pattern.fullmatch(raw):
        raise Refused(f"{preset.id_param} is not a {preset.name} participant id.")
    extra = {}
    for attribute, name in (("study_id", preset.study_param), ("session_id", preset.session_param)):
        value = query.get(name, "") if name else ""
        if value and not _TOKEN.fullmatch(value):
            raise Refused(f"{name} is not an id we can store (1..64 letters, digits or _.:-).")
        extra[attribute] = value or None
    if panel == "mturk" and extra["session_id"] == MTURK_PREVIEW:
        raise Refused("This is the HIT's preview: accept the HIT to start.")
    if panel == "mturk":
        extra["submit_to"] = mturk_submit_to_from_query(query)
    return PanelIds(raw, **extra)


def recruitment_of(study: Study) -> Recruitment:
    """The study's recruitment settings, made (closed public link, fresh codes and secret) on first use."""
    recruitment, _ = Recruitment.objects.get_or_create(study=study)
    return recruitment


RECRUITMENT_SETTINGS = (
    "public_link_open",
    "panel",
    "completion_url",
    "code_completed",
    "code_screened_out",
    "code_failed_checks",
    "time_limit_minutes",
    "closed",
    "closed_cells",
    "checks",
)
_CODE = re.compile(r"[A-Za-z0-9_-]{1,40}")
# The study-level limit, as the per-scenario one: up to a week (a larger one overflowed the deadline's arithmetic).
MAX_STUDY_LIMIT_MINUTES = 7 * 24 * 60


def recruitment_update(*, study: Study, **fields) -> Recruitment:
    """Change a study's recruitment settings (its page); each value checked here, for every caller.
    `closed` (bool) closes the study to new arrivals; `closed_cells` is [[scenario code, system code], ...]."""
    outside = sorted(set(fields) - set(RECRUITMENT_SETTINGS))
    if outside:
        raise RecruitmentError(f"not a recruitment setting: {', '.join(outside)}")
    recruitment = recruitment_of(study)
    errors = []
    if "panel" in fields and fields["panel"] not in PANELS:
        errors.append(f"panel: one of {', '.join(PANELS)}")
    url = fields.get("completion_url", "")
    if url and (
        not url.startswith("https://")
        or "{code}" not in url
        or len(url) > 500
        or any(c.isspace() for c in url)
    ):
        errors.append("completion URL: an https:// address with {code} where the code goes")
    for name in ("code_completed", "code_screened_out", "code_failed_checks"):
        if name in fields and not _CODE.fullmatch(fields[name] or ""):
            errors.append(f"{name.replace('_', ' ')}: 1..40 letters, digits, _ or -")
    codes = [
        fields.get(n, getattr(recruitment, n))
        for n in ("code_completed", "code_screened_out", "code_failed_checks")
    ]
    if len(set(codes)) != 3:
        errors.append("the three completion codes must differ (the panel tells the outcomes apart by them)")
    limit = fields.get("time_limit_minutes")
    if limit is not None and (
        isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_STUDY_LIMIT_MINUTES
    ):
        errors.append(f"study time limit: 1..{MAX_STUDY_LIMIT_MINUTES} minutes, or none")
    cells = fields.get("closed_cells", [])
    known = {
        (c, y)
        for c in study.scenarios.values_list("code", flat=True)
        for y in study.systems.values_list("code", flat=True)
    }
    for cell in cells:
        if not (isinstance(cell, list | tuple) and len(cell) == 2 and tuple(cell) in known):
            errors.append(f"closed cell {cell!r}: not a scenario code and a system code of this study")
    if "checks" in fields:
        errors += check_items_errors(fields["checks"])
    if errors:
        raise RecruitmentError("; ".join(errors), errors=errors)
    if "closed" in fields:
        closed = fields.pop("closed")
        fields["closed_at"] = (recruitment.closed_at or timezone.now()) if closed else None
    if "closed_cells" in fields:
        fields["closed_cells"] = [list(cell) for cell in cells]
    for name, value in fields.items():
        setattr(recruitment, name, value)
    if fields:
        recruitment.save(update_fields=list(fields))
        AuditEntry.objects.create(
            study=study, action="recruitment_changed", detail={k: str(v) for k, v in fields.items()}
        )
    return recruitment


def completion_url_template(recruitment: Recruitment) -> str:
    return recruitment.completion_url or PANELS[recruitment.panel].completion_url


# --- state changes ------------------------------------------------------------------------------------


def participant_state_set(
    *,
    participant: Participant,
    state: str,
    reason: str = "",
    now: datetime | None = None,
    detail: Mapping | None = None,
) -> bool:
    """Move `participant` to `state` if they are still in the state this instance holds (a conditional
    UPDATE); an ended participant only moves to withdrawn. Returns whether it moved; records an AuditEntry."""
    current = state_of(participant)
    if state == current or (current in ENDED and state != WITHDRAWN):
        return False
    now = now or timezone.now()
    held = Q(state__isnull=True) | Q(state=INVITED) if current == INVITED else Q(state=current)
    moved = Participant.objects.filter(held, pk=participant.pk).update(
        state=state, state_changed_at=now, state_reason=reason[:300] or None
    )
    if moved:
        participant.state, participant.state_changed_at, participant.state_reason = (
            state,
            now,
            reason[:300] or None,
        )
        AuditEntry.objects.create(
            study_id=participant.study_id,
            participant_code=participant.code,
            action="participant_state",
            detail={"from": current, "to": state, "reason": reason, **(detail or {})},
        )
    return bool(moved)


def state_derived(
    *, participant: Participant, sessions: Iterable[tuple[bool, bool]], assignments: int
) -> str:
    """The state a participant's rows say, before the ending states only events set (returned, timed out,
    screened out). `sessions`: (ended, answered or withdrawn) per session held."""
    if participant.withdrawn_at is not None or participant.declined_at is not None:
        return WITHDRAWN
    sessions = list(sessions)
    if (
        assignments
        and len(sessions) == assignments
        and all(ended and answered for ended, answered in sessions)
    ):
        return COMPLETED
    if sessions:
        return ACTIVE
    if participant.started_at is not None or participant.consented_at is not None:
        return STARTED
    return INVITED


def participant_state_sync(
    *,
    participant: Participant,
    sessions: Iterable[tuple[bool, bool]] | None = None,
    assignments: int | None = None,
) -> str:
    """Bring the stored state up to what the participant's rows say; returns the state."""
    if sessions is None or assignments is None:
        rows = list(
            Assignment.objects.filter(participant=participant, retake_of__isnull=True).values_list(
                "session__id", "session__ended_at", "session__end_reason", "session__post_task_answers"
            )
        )
        assignments = len(rows)
        sessions = [_session_done(*row[1:]) for row in rows if row[0] is not None]
    derived = state_derived(participant=participant, sessions=sessions, assignments=assignments)
    if derived != state_of(participant):
        reason = "declined consent" if derived == WITHDRAWN and participant.withdrawn_at is None else ""
        participant_state_set(participant=participant, state=derived, reason=reason)
    return state_of(participant)


def _session_done(ended_at, end_reason, post_task_answers) -> tuple[bool, bool]:
    return ended_at is not None, bool(post_task_answers) or end_reason == SearchSession.EndReason.WITHDRAWN


def participant_visit(*, participant: Participant, now: datetime | None = None) -> str:
    """A participant opened a page of their link: the study clock starts at the first visit, an overdue
    participant is timed out, and the state follows their rows. Returns the state."""
    now = now or timezone.now()
    if (
        participant.started_at is None
        and participant.withdrawn_at is None
        and participant.declined_at is None
    ):
        if Participant.objects.filter(pk=participant.pk, started_at__isnull=True).update(started_at=now):
            participant.started_at = now
    if state_of(participant) not in ENDED:
        participant_time_out_if_due(participant=participant, now=now)
    if state_of(participant) not in ENDED or (participant.withdrawn_at is not None):
        participant_state_sync(participant=participant)
    return state_of(participant)


def participant_deadline(participant: Participant, recruitment: Recruitment | None) -> datetime | None:
    """When the study-level limit times the participant out: THE deadline rule (rules.deadline_at) from the
    first visit; None without a limit or a visit."""
    if recruitment is None or participant.started_at is None:
        return None
    return deadline_at(participant.started_at, recruitment.time_limit_minutes)


def participant_time_out_if_due(
    *, participant: Participant, now: datetime | None = None, recruitment: Recruitment | None = None
) -> bool:
    """Time out a participant past the study-level limit (plus the client's grace): their open session ends
    as timed out at the deadline, their state becomes timed_out and their row is freed. True when it did."""
    if recruitment is None:
        recruitment = Recruitment.objects.filter(study_id=participant.study_id).first()
    deadline = participant_deadline(participant, recruitment)
    now = now or timezone.now()
    if deadline is None or now < deadline + TIME_LIMIT_GRACE or state_of(participant) in ENDED:
        return False
    with transaction.atomic():
        if not participant_state_set(
            participant=participant,
            state=TIMED_OUT,
            now=now,
            reason=f"study time limit of {recruitment.time_limit_minutes} minutes",
        ):
            return False
        open_sessions = list(
            SearchSession.objects.filter(
                assignment__participant=participant, ended_at__isnull=True
            ).values_list("pk", "started_at", "assignment__scenario_id")
        )
        for pk, started_at, _ in open_sessions:
            ended_at = max(deadline, started_at)
            if SearchSession.objects.filter(pk=pk, ended_at__isnull=True).update(
                ended_at=ended_at, end_reason=SearchSession.EndReason.TIMED_OUT
            ):
                event_create(
                    participant=participant,
                    session=SearchSession(pk=pk),
                    type="session_end",
                    client_event_id=f"server-study-timeout-{pk}",
                    sequence=None,
                    client_time=None,
                    data={"reason": "timed_out", "by": "server", "limit": "study"},
                    ack={"ok": True, "reason": "timed_out"},
                )
        if open_sessions:
            sessions_changed(
                participant.study_id,
                [pk for pk, _, _ in open_sessions],
                [scenario for _, _, scenario in open_sessions],
            )
    return True


def participant_screen_out(*, participant: Participant, reason: str, failed_checks: bool = False) -> bool:
    """A participant the study's checks screen out (their row is freed); `failed_checks` gives them the
    failed-checks code instead of the screened-out one."""
    if not reason.strip():
        raise RecruitmentError("a screen-out needs a reason")
    return participant_state_set(
        participant=participant,
        state=SCREENED_OUT,
        reason=("failed checks: " if failed_checks else "") + reason.strip(),
    )


# --- attention and comprehension checks ---------------------------------------------------------------

# Presets that follow panel policy. Prolific: attention checks are instructional ("choose X"), and a participant
# may be rejected only after failing two of them; comprehension checks come early, with a second chance, and a
# participant who fails one twice is screened out (paid for their time, asked to return), not rejected.
CHECK_PRESETS = {
    "prolific": {"attention_failures_to_screen_out": 2, "comprehension_tries": 2},
    "strict": {"attention_failures_to_screen_out": 1, "comprehension_tries": 1},
}
CHECK_KINDS = ("attention", "comprehension")
MAX_CHECKS = 20


def check_items_errors(checks) -> list[str]:
    """What is wrong with a study's checks setting ({"preset", "items"}); empty when it is usable."""
    if checks in (None, {}):
        return []
    if not isinstance(checks, dict):
        return ["checks: an object with preset and items"]
    errors = []
    if checks.get("preset", "prolific") not in CHECK_PRESETS:
        errors.append(f"checks preset: one of {', '.join(CHECK_PRESETS)}")
    unknown = sorted(str(k) for k in checks if k not in ("preset", "items", "gold"))
    if unknown:
        errors.append(f"checks: unknown key(s) {', '.join(unknown)[:200]}")
    if not isinstance(checks.get("gold", False), bool):
        errors.append("checks gold: true or false (gold documents inside each scenario)")
    items = checks.get("items", [])
    if not isinstance(items, list) or len(items) > MAX_CHECKS:
        return [*errors, f"checks items: a list of at most {MAX_CHECKS}"]
    seen = set()
    for number, item in enumerate(items, start=1):
        where = f"check {number}"
        if not isinstance(item, dict):
            errors.append(f"{where}: an object with name, kind, label, choices and answer")
            continue
        unknown = sorted(str(k) for k in item if k not in ("name", "kind", "label", "choices", "answer"))
        name = item.get("name")
        if unknown:
            errors.append(f"{where}: unknown key(s) {', '.join(unknown)}")
        if (
            not isinstance(name, str)
            or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", name)
            or name in seen
        ):
            errors.append(f"{where}: name is 1-64 letters, digits or _, once")
        seen.add(name)
        if item.get("kind") not in CHECK_KINDS:
            errors.append(f"{where}: kind is attention or comprehension")
        label, choices, answer = item.get("label"), item.get("choices"), item.get("answer")
        if not isinstance(label, str) or not 1 <= len(label.strip()) <= 1000:
            errors.append(f"{where}: label is a text of 1-1000 characters")
        if (
            not isinstance(choices, list)
            or not 2 <= len(choices) <= 20
            or not all(isinstance(c, str) and 1 <= len(c.strip()) <= 200 for c in choices)
            or len(set(choices)) != len(choices)
        ):
            errors.append(f"{where}: choices are 2-20 distinct texts of 1-200 characters")
        elif answer not in choices:
            errors.append(f"{where}: answer must be one of its choices")
    return errors


def gold_failures(participant: Participant) -> int:
    """Gold documents judged wrongly (studies/participation/gold.py): each counts as a failed attention check."""
    return participant.events.filter(type="gold", payload__ack__passed=False).count()


def check_items(recruitment: Recruitment | None) -> list[dict]:
    checks = recruitment.checks if recruitment is not None else None
    if not checks or check_items_errors(checks):
        return []
    return list(checks.get("items", []))


@dataclass
class CheckProgress:
    pending: list = field(default_factory=list)  # items still to answer, in order
    tries: dict = field(default_factory=dict)  # name -> wrong answers so far
    attention_failures: int = 0
    last_wrong: str | None = None  # the item just answered wrongly with a try left


def checks_progress(participant: Participant, recruitment: Recruitment | None = None) -> CheckProgress:
    """Where the participant is in the study's checks, from their "check" events (the record of each answer)."""
    if recruitment is None:
        recruitment = Recruitment.objects.filter(study_id=participant.study_id).first()
    items = check_items(recruitment)
    progress = CheckProgress()
    if not items:
        return progress
    policy = CHECK_PRESETS[recruitment.checks.get("preset", "prolific")]
    answered = {}
    for ack in participant.events.filter(type="check").order_by("id").values_list("payload__ack", flat=True):
        if isinstance(ack, dict) and ack.get("name"):
            answered.setdefault(ack["name"], []).append(bool(ack.get("passed")))
    for item in items:
        results = answered.get(item["name"], [])
        wrong = results.count(False)
        progress.tries[item["name"]] = wrong
        if item["kind"] == "attention":
            progress.attention_failures += wrong > 0
            done = bool(results)
        else:
            done = True in results or wrong >= policy["comprehension_tries"]
            if not done and wrong:
                progress.last_wrong = item["name"]
        if not done:
            progress.pending.append(item)
    return progress


def check_answer_record(
    *,
    participant: Participant,
    name: str,
    answer: str,
    client_event_id: str,
    sequence: int | None = None,
    client_time=None,
) -> dict:
    """One answer to one of the study's checks, stored as a "check" Event with its outcome (passed, and why
    not). Past the preset's limit the participant is screened out: failed attention checks give the failed-
    checks code, a comprehension check failed on every try the screened-out one. A re-sent answer (same
    client event id) returns the first answer's outcome."""
    client_id_check(client_event_id)
    stored = (
        participant.events.filter(client_event_id=client_event_id)
        .values_list("payload__ack", flat=True)
        .first()
    )
    if stored is not None:
        return stored
    participant_check_consented(participant)
    recruitment = Recruitment.objects.filter(study_id=participant.study_id).first()
    progress = checks_progress(participant, recruitment)
    item = next((i for i in progress.pending if i["name"] == name), None)
    if item is None:
        raise Refused("This question is already answered.")
    policy = CHECK_PRESETS[recruitment.checks.get("preset", "prolific")]
    attention_failures = progress.attention_failures + gold_failures(participant)
    passed = isinstance(answer, str) and answer == item["answer"]
    tries = progress.tries.get(name, 0) + (not passed)
    reason = "" if passed else (f"{item['kind']} check {name}: answered {str(answer)[:200]!r}")
    ack = {"ok": True, "name": name, "kind": item["kind"], "passed": passed, "reason": reason, "tries": tries}
    with transaction.atomic():
        event_create(
            participant=participant,
            session=None,
            type="check",
            client_event_id=client_event_id,
            sequence=sequence,
            client_time=client_time,
            data={"name": name, "answer": str(answer)[:200]},
            ack=ack,
        )
        if passed:
            return ack
        if (
            item["kind"] == "attention"
            and attention_failures + 1 >= policy["attention_failures_to_screen_out"]
        ):
            participant_screen_out(
                participant=participant,
                failed_checks=True,
                reason=f"{attention_failures + 1} attention checks failed (last: {name})",
            )
            ack["screened_out"] = True
        elif item["kind"] == "comprehension" and tries >= policy["comprehension_tries"]:
            participant_screen_out(
                participant=participant,
                reason=f"comprehension check {name} failed {tries} time{'s' if tries > 1 else ''}",
            )
            ack["screened_out"] = True
    return ack


# --- the sweep ----------------------------------------------------------------------------------------


@dataclass
class SweepResult:
    sessions_ended: int = 0
    timed_out: int = 0
    states_changed: int = 0


def study_sweep(*, study: Study, now: datetime | None = None) -> SweepResult:
    """Close what is overdue in one study, whether or not its participants come back: sessions past the
    per-scenario limit (rules.session_expire_if_due), participants past the study-level one, and every
    state that its rows have moved on. Idempotent; the beat task runs it for every study, the study page
    on each load."""
    now = now or timezone.now()
    result = SweepResult()
    if study.time_limit_minutes:
        oldest = now - TIME_LIMIT_GRACE
        overdue = (
            SearchSession.objects.select_related("assignment__participant__study")
            .filter(assignment__participant__study=study, ended_at__isnull=True, started_at__lt=oldest)
            .order_by("pk")
        )
        for session in overdue:
            result.sessions_ended += session_expire_if_due(session=session, now=now)
    # One query for every participant who may still move (the study page runs this on each load): their
    # columns, their sessions' ends and the study-level limit; a Participant is fetched only to change it.
    rows = (
        Assignment.objects.filter(participant__study=study, retake_of__isnull=True)
        .exclude(participant__state__in=ENDED - {COMPLETED})
        .values_list(
            "participant_id",
            "participant__state",
            "participant__started_at",
            "participant__consented_at",
            "participant__withdrawn_at",
            "participant__declined_at",
            "participant__study__recruitment__time_limit_minutes",
            "session__id",
            "session__ended_at",
            "session__end_reason",
            "session__post_task_answers",
        )
    )
    columns, counts, sessions = {}, defaultdict(int), defaultdict(list)
    for participant_id, *fields, session_id, ended_at, end_reason, answers in rows:
        columns[participant_id] = fields
        counts[participant_id] += 1
        if session_id is not None:
            sessions[participant_id].append(_session_done(ended_at, end_reason, answers))
    recruitment = None
    for participant_id, (
        state,
        started_at,
        consented_at,
        withdrawn_at,
        declined_at,
        limit,
    ) in columns.items():
        before = state or INVITED
        deadline = deadline_at(started_at, limit) if started_at and limit else None
        if before not in ENDED and deadline is not None and now >= deadline + TIME_LIMIT_GRACE:
            recruitment = recruitment or Recruitment.objects.get(study=study)
            participant = Participant.objects.get(pk=participant_id)
            result.timed_out += participant_time_out_if_due(
                participant=participant, now=now, recruitment=recruitment
            )
            continue
        light = Participant(
            started_at=started_at,
            consented_at=consented_at,
            withdrawn_at=withdrawn_at,
            declined_at=declined_at,
        )
        derived = state_derived(
            participant=light, sessions=sessions[participant_id], assignments=counts[participant_id]
        )
        if derived != before and (before not in ENDED or derived == WITHDRAWN):
            participant = Participant.objects.get(pk=participant_id)
            participant_state_sync(
                participant=participant, sessions=sessions[participant_id], assignments=counts[participant_id]
            )
            result.states_changed += state_of(participant) != before
    return result


def study_opened_sweep(sender, study: Study, **kwargs) -> None:
    """The study page's sweep (studies.signals.study_opened): in eager mode, where no beat runs the task."""
    from django.conf import settings

    if settings.CELERY_TASK_ALWAYS_EAGER:
        study_sweep(study=study)


def connect_receivers() -> None:
    from studies.signals import enrolment_rows, study_opened

    study_opened.connect(study_opened_sweep, dispatch_uid="recruitment.study_opened_sweep")
    enrolment_rows.connect(enrolment_rows_choose, dispatch_uid="recruitment.enrolment_rows_choose")


# --- the attrition-aware Latin square -----------------------------------------------------------------


def holds_row(participant: Participant, *, now: datetime, limit_minutes: int | None) -> bool:
    """Whether the participant counts for their row: completed, invited (not arrived yet), or started and
    within the cutoff (psiTurk's cutoff_time): the study-level limit, by THE deadline rule (rules.deadline_at)."""
    state = state_of(participant)
    if state in (COMPLETED, INVITED):
        return True
    if state in (STARTED, ACTIVE):
        deadline = deadline_at(participant.started_at, limit_minutes) if participant.started_at else None
        return deadline is None or now < deadline + TIME_LIMIT_GRACE
    return False


@dataclass
class RowCounts:
    """Per plan row: holders now, completed, active, freed (given up) and re-issued."""

    holders: dict = field(default_factory=lambda: defaultdict(int))
    completed: dict = field(default_factory=lambda: defaultdict(int))
    active: dict = field(default_factory=lambda: defaultdict(int))
    freed: dict = field(default_factory=lambda: defaultdict(int))
    reissued: dict = field(default_factory=lambda: defaultdict(int))
    open_freed: list = field(default_factory=list)  # (row, participant id), oldest first, not re-issued yet
    next_fresh: int = 0


def row_counts(
    *, study: Study, now: datetime | None = None, recruitment: Recruitment | None = None
) -> RowCounts:
    now = now or timezone.now()
    if recruitment is None:
        recruitment = Recruitment.objects.filter(study=study).first()
    minutes = recruitment.time_limit_minutes if recruitment else None
    participants = list(
        Participant.objects.filter(study=study, preview_at__isnull=True).only(
            "pk", "enrolment_index", "plan_row", "reissue_of", "state", "started_at", "state_changed_at"
        )
    )
    taken = {p.reissue_of_id for p in participants if p.reissue_of_id is not None}
    counts = RowCounts()
    freed_rows = []
    for participant in participants:
        row = plan_row_of(participant)
        state = state_of(participant)
        if participant.reissue_of_id is None:
            counts.next_fresh = max(counts.next_fresh, row + 1)
        else:
            counts.reissued[row] += 1
        holds = holds_row(participant, now=now, limit_minutes=minutes)
        if holds:
            counts.holders[row] += 1
        if state == COMPLETED:
            counts.completed[row] += 1
        elif state in (STARTED, ACTIVE) and holds:
            counts.active[row] += 1
        elif state in FREEING:
            counts.freed[row] += 1
            if participant.pk not in taken:
                freed_rows.append(
                    (participant.state_changed_at or participant.started_at or now, row, participant.pk)
                )
    counts.open_freed = [(row, pk) for _, row, pk in sorted(freed_rows, key=lambda item: (item[0], item[2]))]
    return counts


def _closed_rows(recruitment: Recruitment, scenarios, systems, rows: Iterable[int]) -> set[int]:
    closed = {
        tuple(cell) for cell in recruitment.closed_cells or [] if isinstance(cell, list) and len(cell) == 2
    }
    if not closed:
        return set()
    return {
        row
        for row in rows
        if any(
            (scenario.code, system.code) in closed
            for scenario, system in participant_assignment(scenarios, systems, row)
        )
    }


def rows_to_issue(
    *,
    study: Study,
    count: int,
    now: datetime | None = None,
    recruitment: Recruitment | None = None,
    scenarios=None,
    systems=None,
) -> list[tuple[int, int | None]]:
    """THE row choice for `count` new participants, whichever way they arrive (the public link, the
    researcher's enrolment): `(plan row, id of the participant whose freed row it is, or None)` for each, in
    turn, each taking row_to_issue's choice after those before it (a freed row is taken once, least held then
    lowest; then the next fresh rows). Rows touching a closed cell are never issued; RecruitmentError when
    every row near the plan's end touches one. The caller holds the study row's lock (SELECT ... FOR UPDATE)
    until its participants are written, so two callers at once never choose the same rows."""
    now = now or timezone.now()
    if recruitment is None:
        recruitment = Recruitment.objects.filter(study=study).first()
    scenarios = list(study.scenarios.order_by("id")) if scenarios is None else scenarios
    systems = list(study.systems.order_by("id")) if systems is None else systems
    counts = row_counts(study=study, now=now, recruitment=recruitment)
    holders, freed, next_fresh = dict(counts.holders), list(counts.open_freed), counts.next_fresh
    window = range(next_fresh, next_fresh + 64 + count)
    closed = (
        _closed_rows(recruitment, scenarios, systems, {row for row, _ in freed} | set(window))
        if recruitment is not None
        else set()
    )
    chosen = []
    for _ in range(count):
        row, freed_from = row_to_issue(
            holders=holders, freed=freed, next_fresh=next_fresh, closed_rows=closed
        )
        if row in closed or (row not in window and freed_from is None):
            raise RecruitmentError(
                "every row of the plan touches a closed cell: open one to take participants"
            )
        if freed_from is None:
            next_fresh = row + 1
        else:
            freed = [(r, key) for r, key in freed if key != freed_from]
        holders[row] = holders.get(row, 0) + 1  # an invited or arrived participant holds it
        chosen.append((row, freed_from))
    return chosen


def enrolment_rows_choose(sender, study: Study, count: int, **kwargs) -> list[tuple[int, int | None]]:
    """The researcher's enrolment (studies.signals.enrolment_rows, studies/design/services.py) takes its rows
    as arrivals do (rows_to_issue); the design pages cannot import participation."""
    try:
        return rows_to_issue(study=study, count=count)
    except RecruitmentError as error:
        raise DesignError(str(error)) from None


@dataclass
class Joined:
    participant: Participant
    created: bool
    reissued_from: int | None = None  # the participant whose freed row this one received


def participant_join(*, study: Study, ids: PanelIds, now: datetime | None = None) -> Joined:
    """The public link's first visit: the participant with this panel id (server side: the same id gets the
    same participant back), or a new one given the next row: a freed row first (least held, then lowest),
    else the next fresh row of the plan. Refused when the link is closed or the study is full."""
    existing = Participant.objects.filter(study=study, panel_id=ids.panel_id).first()
    if existing is not None:
        return Joined(existing, False)
    try:
        with transaction.atomic():
            return _join_locked(study=study, ids=ids, now=now or timezone.now())
    except IntegrityError:
        # The same panel id at the same moment (two tabs; SQLite does not lock the study row): the winner's.
        existing = Participant.objects.filter(study=study, panel_id=ids.panel_id).first()
        if existing is None:
            raise
        return Joined(existing, False)


def _join_locked(*, study: Study, ids: PanelIds, now: datetime) -> Joined:
    # The study row is the lock researcher enrolment takes too: one arrival at a time picks a row.
    study = Study.objects.select_for_update().get(pk=study.pk)
    existing = Participant.objects.filter(study=study, panel_id=ids.panel_id).first()
    if existing is not None:
        return Joined(existing, False)
    if (status := status_of(study)) != OPEN:  # paused or closed: no new participant (design/lifecycle.py)
        raise Refused(PARTICIPANT_MESSAGES[status])
    recruitment = recruitment_of(study)
    if not recruitment.public_link_open or recruitment.closed_at is not None:
        raise Refused("This study is not taking new participants at the moment. Thank you for your interest.")
    scenarios = list(study.scenarios.order_by("id"))
    systems = list(study.systems.order_by("id"))
    if not scenarios or not systems or len(scenarios) % len(systems):
        raise Refused("This study is not ready for participants yet.")
    try:
        [(row, freed_from)] = rows_to_issue(
            study=study, count=1, now=now, recruitment=recruitment, scenarios=scenarios, systems=systems
        )
    except RecruitmentError:  # every row touches a closed cell
        raise Refused(
            "This study is not taking new participants at the moment. Thank you for your interest."
        ) from None
    index = (
        study.participants.filter(preview_at__isnull=True)  # a preview's index is out of the plan's range
        .order_by("-enrolment_index")
        .values_list("enrolment_index", flat=True)
        .first()
    )
    index = 0 if index is None else index + 1
    code = f"P{index + 1:03d}"
    if study.participants.filter(code=code).exists():
        code = f"P{index + 1:03d}-{ids.panel_id[-4:]}"
    participant = Participant.objects.create(
        study=study,
        code=code,
        enrolment_index=index,
        plan_row=row,
        reissue_of_id=freed_from,
        panel_id=ids.panel_id,
        panel_study_id=ids.study_id,
        panel_session_id=ids.session_id,
        started_at=now,
        state=STARTED,
        state_changed_at=now,
    )
    Assignment.objects.bulk_create(
        Assignment(participant=participant, position=position, scenario=scenario, system=system)
        for position, (scenario, system) in enumerate(
            participant_assignment(scenarios, systems, row), start=1
        )
    )
    if study.design_locked_at is None:
        Study.objects.filter(pk=study.pk, design_locked_at__isnull=True).update(design_locked_at=now)
    AuditEntry.objects.create(
        study=study,
        participant_code=code,
        action="participant_joined",
        detail={
            "panel": recruitment.panel,
            "plan_row": row,
            "reissue_of": freed_from,
            # Where the completion page posts MTurk's form (mturk_submit_to_of): kept here, as the arrival's
            # record, since Participant has no column for it.
            **({"turk_submit_to": ids.submit_to} if ids.submit_to else {}),
        },
    )
    return Joined(participant, True, freed_from)


# --- completion ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Completion:
    kind: str  # completed | screened_out | failed_checks
    code: str
    redirect_url: str  # "" when the panel takes the code pasted, or MTurk's form is posted
    # MTurk: the externalSubmit address the page posts assignmentId and the code to ("" otherwise).
    submit_url: str = ""
    submit_fields: dict = field(default_factory=dict)


def mturk_submit_to_of(participant: Participant) -> str | None:
    """The turkSubmitTo an MTurk participant arrived with (their arrival's audit entry), if still allowed."""
    detail = (
        AuditEntry.objects.filter(
            study_id=participant.study_id, participant_code=participant.code, action="participant_joined"
        )
        .order_by("at", "pk")
        .values_list("detail", flat=True)
        .first()
    )
    host = detail.get("turk_submit_to") if isinstance(detail, dict) else None
    return host if mturk_submit_url(host) else None


def completion_of(participant: Participant) -> Completion | None:
    """The code (and the panel URL) a participant who ended receives; None while they have not ended, or
    ended without one (withdrawn, returned, timed out: the panel handles those)."""
    state = state_of(participant)
    if state not in (COMPLETED, SCREENED_OUT):
        return None
    recruitment = Recruitment.objects.filter(study_id=participant.study_id).first()
    if recruitment is None:
        return None
    if state == COMPLETED:
        kind, code = "completed", recruitment.code_completed
    elif (participant.state_reason or "").startswith("failed checks"):
        kind, code = "failed_checks", recruitment.code_failed_checks
    else:
        kind, code = "screened_out", recruitment.code_screened_out
    template = completion_url_template(recruitment) if participant.panel_id else ""
    if recruitment.panel == "mturk" and participant.panel_id and participant.panel_session_id:
        submit_url = mturk_submit_url(mturk_submit_to_of(participant))
        if submit_url:
            fields = {"assignmentId": participant.panel_session_id, "completionCode": code}
            return Completion(kind, code, "", submit_url, fields)
    return Completion(kind, code, template.replace("{code}", code))


def last_stored_sequence(participant: Participant) -> int:
    """The highest client sequence number stored for the participant (0 for none): the last page redirects
    only once this reaches the page's own counter."""
    from django.db.models import Max

    return participant.events.aggregate(last=Max("sequence"))["last"] or 0


# --- the panel's status -------------------------------------------------------------------------------

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
PANEL_ENDS = {"returned": RETURNED, "timed_out": TIMED_OUT}


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
    are recorded as the panel's word. A notification older than the one applied last (out of order) is kept
    and answered but changes nothing. Returns the outcome {"participant", "status", "applied", "note"}."""
    status = PANEL_STATUS_NAMES.get(status.strip().lower()) if isinstance(status, str) else None
    if status is None:
        raise RecruitmentError(
            "status must be one of returned, timed_out, approved, rejected, awaiting_review, "
            "active, screened_out"
        )
    stored = PanelNotification.objects.filter(study=study, key=key).first()
    if stored is not None:
        return {**stored.outcome, "replayed": True}
    with transaction.atomic():
        participant = Participant.objects.select_for_update().filter(study=study, panel_id=panel_id).first()
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
        ):
            outcome["note"] = "older than the status applied last: kept, not applied"
        else:
            participant.panel_status, participant.panel_status_at = status, sent_at or timezone.now()
            participant.save(update_fields=["panel_status", "panel_status_at"])
            outcome["applied"] = True
            ends = PANEL_ENDS.get(status)
            if ends and state_of(participant) not in ENDED:
                participant_state_set(participant=participant, state=ends, reason=f"panel: {status}")
            outcome["state"] = state_of(participant)
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
    try:
        header = [name.strip().lower() for name in next(reader)]
    except StopIteration:
        raise RecruitmentError("the file is empty") from None
    except csv.Error as error:
        raise RecruitmentError(f"line 1: {error}") from None

    def column(names):
        return next((header.index(name) for name in names if name in header), None)

    id_col, status_col = column(_EXPORT_ID), column(_EXPORT_STATUS)
    submission_col, time_col = column(_EXPORT_SUBMISSION), column(_EXPORT_TIME)
    missing = [label for label, col in (("participant id", id_col), ("status", status_col)) if col is None]
    if missing:
        raise RecruitmentError(
            f"line 1: no {' and no '.join(missing)} column (found: {', '.join(header)[:300]})"
        )
    errors, parsed = [], []
    try:
        for line, row in enumerate(reader, start=2):
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                errors.append(f"line {line}: {len(row)} fields, the header has {len(header)}")
                continue
            panel_id, status = row[id_col].strip(), row[status_col].strip()
            if not _TOKEN.fullmatch(panel_id):
                errors.append(f"line {line}, {header[id_col]}: not a participant id")
            if PANEL_STATUS_NAMES.get(status.lower()) is None:
                errors.append(f"line {line}, {header[status_col]}: unknown status {status[:40]!r}")
            sent_at = None
            if time_col is not None and row[time_col].strip():
                try:
                    sent_at = parse_datetime(row[time_col].strip().replace(" ", "T", 1))
                except ValueError:
                    sent_at = None
                if sent_at is None:
                    errors.append(f"line {line}, {header[time_col]}: not a date and time")
                elif timezone.is_naive(sent_at):
                    sent_at = timezone.make_aware(sent_at, UTC)
            submission = row[submission_col].strip() if submission_col is not None else ""
            parsed.append((panel_id, status, sent_at, submission))
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


# --- reconciliation -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Disagreement:
    participant_code: str | None
    panel_id: str
    ours: str
    panel: str
    reason: str


def reconciliation(*, study: Study) -> list[Disagreement]:
    """Every disagreement between the panel's last word and our state, each with its reason."""
    rows = []
    participants = list(
        Participant.objects.filter(study=study, panel_id__isnull=False).order_by("enrolment_index")
    )
    known = {p.panel_id for p in participants}
    # Silence from the panel is a disagreement only once its export was imported (it lists every submission).
    exported = PanelNotification.objects.filter(study=study, source="import").exists()
    for participant in participants:
        ours, theirs = state_of(participant), participant.panel_status
        reason = _disagreement(ours, theirs, exported=exported)
        if reason:
            rows.append(Disagreement(participant.code, participant.panel_id, ours, theirs or "—", reason))
    unknown = (
        PanelNotification.objects.filter(study=study, participant__isnull=True)
        .exclude(panel_id__in=known)
        .order_by("panel_id", "received_at")
    )
    seen = set()
    for notification in unknown:
        if notification.panel_id in seen:
            continue
        seen.add(notification.panel_id)
        rows.append(
            Disagreement(
                None,
                notification.panel_id,
                "—",
                notification.status,
                "the panel knows this id; no participant of ours has it (never opened the link?)",
            )
        )
    return rows


def _disagreement(ours: str, theirs: str | None, *, exported: bool) -> str:
    if theirs is None:
        return "not in the panel's export, though they opened the link" if exported else ""
    if theirs in ("approved", "awaiting_review") and ours != COMPLETED:
        return f"the panel has a submission, ours is {ours}: approve only with a completion code"
    if theirs == "rejected" and ours == COMPLETED:
        return "completed here, rejected on the panel"
    if theirs == "returned" and ours not in (RETURNED, WITHDRAWN):
        return f"returned on the panel, {ours} here" + (
            ": their data stay (intention to treat)" if ours == COMPLETED else ""
        )
    if theirs == "timed_out" and ours not in (TIMED_OUT, RETURNED, WITHDRAWN):
        return f"timed out on the panel, {ours} here"
    if theirs == "screened_out" and ours != SCREENED_OUT:
        return f"screened out on the panel, {ours} here"
    if theirs == "active" and ours in ENDED:
        return f"still active on the panel, {ours} here"
    return ""
