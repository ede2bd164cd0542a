"""The panels (Prolific, MTurk, a generic pool): their URL parameters and completion URLs, the ids the public
link carries, and a study's recruitment settings (recruitment_update checks each value for every caller)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from studies.errors import RecruitmentError, Refused
from studies.models import AuditAction, AuditEntry, Recruitment, Study
from studies.participation.recruitment.checks import check_items_errors
from studies.participation.recruitment.effort import effort_errors, preset_fields


@dataclass(frozen=True)
class Panel:
    """A panel's URL parameters and its completion URL ("{code}": the participant's completion code)."""

    name: str
    id_param: str
    study_param: str | None
    session_param: str | None
    id_pattern: re.Pattern
    completion_url: str


PANEL_ID_TEXT = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
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
    # MTurk worker ids are capitals and digits (one typed in small letters is folded up); the HIT is
    # submitted by a form posted to the turkSubmitTo the arrival carried (mturk_submit_to_from_query), else
    # by the worker pasting the code.
    "mturk": Panel("MTurk", "workerId", "hitId", "assignmentId", re.compile(r"[A-Za-z0-9]{1,64}"), ""),
    "generic": Panel("Generic pool", "pid", None, None, PANEL_ID_TEXT, ""),
}


def panel_id_canonical(panel: str, raw: str) -> str:
    """The one stored form of a panel id, as the panel writes it: Prolific's 24 hex digits in small letters,
    MTurk's worker ids in capitals; a generic pool's ids as given (its ids may differ by case alone). The
    same id in another letter case is then the same participant."""
    if panel == "prolific":
        return raw.lower()
    if panel == "mturk":
        return raw.upper()
    return raw


def panel_id_lookup(panel: str, raw: str) -> dict:
    """The filter that finds a participant by panel id: the canonical form, compared without regard to case
    for the panels whose ids have one case (a participant stored before ids were folded is found too)."""
    canonical = panel_id_canonical(panel, raw)
    return {"panel_id__iexact": canonical} if panel in ("prolific", "mturk") else {"panel_id": canonical}


@dataclass(frozen=True)
class PanelIds:
    panel_id: str
    study_id: str | None = None
    session_id: str | None = None
    submit_to: str | None = None  # MTurk's turkSubmitTo, one of settings.MTURK_SUBMIT_HOSTS


# MTurk's assignmentId while the worker previews the HIT (has not accepted it): no worker id, nobody to
# create.
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"


def mturk_preview(panel: str, query: Mapping[str, str]) -> bool:
    """Whether the public link was opened in MTurk's preview of the HIT (show the study, create nobody)."""
    return panel == "mturk" and query.get("assignmentId") == MTURK_PREVIEW


def mturk_submit_hosts() -> tuple[str, ...]:
    from django.conf import settings

    return tuple(settings.MTURK_SUBMIT_HOSTS)


def mturk_frame_ancestors() -> str:
    """The frame-ancestors sources of the MTurk arrival landing: MTurk's hosts
    (settings.MTURK_FRAME_ANCESTORS), nothing from the request."""
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
    (the public link shows the study instead, mturk_preview); MTurk's turkSubmitTo outside the allow-list
    too."""
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
        if value and not PANEL_ID_TEXT.fullmatch(value):
            raise Refused(f"{name} is not an id we can store (1..64 letters, digits or _.:-).")
        extra[attribute] = value or None
    if panel == "mturk" and extra["session_id"] == MTURK_PREVIEW:
        raise Refused("This is the HIT's preview: accept the HIT to start.")
    if panel == "mturk":
        extra["submit_to"] = mturk_submit_to_from_query(query)
    return PanelIds(panel_id_canonical(panel, raw), **extra)


def recruitment_of(study: Study) -> Recruitment:
    """The study's recruitment settings, made (fresh token, codes and secret) on first use. The public link
    takes arrivals while the study is open (design/lifecycle.py)."""
    recruitment, _ = Recruitment.objects.get_or_create(study=study)
    return recruitment


RECRUITMENT_SETTINGS = (
    "panel",
    "completion_url",
    "code_completed",
    "code_screened_out",
    "code_failed_checks",
    "time_limit_minutes",
    "closed_cells",
    "checks",
    # Minimum effort per task (recruitment/effort.py): a preset fills the three numbers.
    "effort_preset",
    "effort_min_queries",
    "effort_min_judgments",
    "effort_min_active_seconds",
    "effort_outcome",
    "code_mode",
)
_CODE = re.compile(r"[A-Za-z0-9_-]{1,40}")
# The study-level limit, as the per-scenario one: up to a week (a larger one overflowed the deadline's
# arithmetic).
MAX_STUDY_LIMIT_MINUTES = 7 * 24 * 60


def recruitment_update(*, study: Study, **fields) -> Recruitment:
    """Change a study's recruitment settings (its page); each value checked here, for every caller.
    `closed_cells` is [[scenario code, system code], ...]. Whether the public link takes arrivals is the
    study's status (design/lifecycle.py), not a setting here."""
    outside = sorted(set(fields) - set(RECRUITMENT_SETTINGS))
    if outside:
        raise RecruitmentError(f"not a recruitment setting: {', '.join(outside)}")
    recruitment = recruitment_of(study)
    errors = _panel_and_code_errors(fields, recruitment)
    limit = fields.get("time_limit_minutes")
    if limit is not None and (
        isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_STUDY_LIMIT_MINUTES
    ):
        errors.append(f"study time limit: 1..{MAX_STUDY_LIMIT_MINUTES} minutes, or none")
    cells = fields.get("closed_cells", [])
    errors += _closed_cell_errors(study, cells)
    if "checks" in fields:
        errors += check_items_errors(fields["checks"])
    errors += effort_errors(fields)
    errors += _code_mode_errors(
        fields.get("code_mode", recruitment.code_mode), fields.get("panel", recruitment.panel)
    )
    if errors:
        raise RecruitmentError("; ".join(errors), errors=errors)
    preset = fields.pop("effort_preset", "custom")
    if preset != "custom":
        fields.update(preset_fields(preset))
    if "closed_cells" in fields:
        fields["closed_cells"] = [list(cell) for cell in cells]
    for name, value in fields.items():
        setattr(recruitment, name, value)
    if fields:
        recruitment.save(update_fields=list(fields))
        AuditEntry.objects.create(
            study=study, action=AuditAction.RECRUITMENT_CHANGED, detail={k: str(v) for k, v in fields.items()}
        )
    return recruitment


def _panel_and_code_errors(fields: dict, recruitment: Recruitment) -> list[str]:
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
    names = ("code_completed", "code_screened_out", "code_failed_checks")
    for name in names:
        if name in fields and not _CODE.fullmatch(fields[name] or ""):
            errors.append(f"{name.replace('_', ' ')}: 1..40 letters, digits, _ or -")
    if len({fields.get(n, getattr(recruitment, n)) for n in names}) != 3:
        errors.append("the three completion codes must differ (the panel tells the outcomes apart by them)")
    return errors


def _closed_cell_errors(study: Study, cells) -> list[str]:
    known = {
        (c, y)
        for c in study.scenarios.values_list("code", flat=True)
        for y in study.systems.values_list("code", flat=True)
    }
    return [
        f"closed cell {cell!r}: not a scenario code and a system code of this study"
        for cell in cells
        # only texts are looked up: a list inside a cell is refused, never hashed
        if not (
            isinstance(cell, list | tuple) and len(cell) == 2 and all(isinstance(code, str) for code in cell)
        )
        or tuple(cell) not in known
    ]


def _code_mode_errors(mode: str, panel: str) -> list[str]:
    if mode not in ("study", "per_participant", "pool"):
        return ["code mode: study, per_participant or pool"]
    if mode != "study" and panel == "prolific":
        # Prolific's completion URL checks the one code set on the study.
        return ["code mode: Prolific takes one code per study; per-participant codes are for MTurk or a pool"]
    return []


def completion_url_template(recruitment: Recruitment) -> str:
    return recruitment.completion_url or PANELS[recruitment.panel].completion_url
