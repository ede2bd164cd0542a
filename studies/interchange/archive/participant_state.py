"""A participant's state, plan row, panel and exclusion in the archive: written by the export and
read back by the import, so that export -> import -> export gives the same participant fields.

The fields (each null when the column is): state (null reads as invited), state_changed_at, state_reason,
started_at, plan_row (null reads as the enrolment index), reissue_of (the code of the participant whose
freed row this one re-uses), panel_id, panel_study_id, panel_session_id, panel_status, panel_status_at,
excluded_at, excluded_reason, excluded_agreement, excluded_manually (false when absent). An older archive
without them imports as before: every participant invited, on their own row, not excluded. The panel ids
(panel_id, panel_study_id, panel_session_id) are written only when the study's owner asked for them by name
(studies/interchange/panel_ids.py); an archive without them imports its participants without panel ids.

The panel the participants came from is the study's (Recruitment.panel): `$.recruitment` carries it as
{"panel": ...}, null when the study never had recruitment settings. The import makes the study's
recruitment with that panel and its link closed, with new tokens, codes and secret (as participants get new
links); the other recruitment settings are not carried.
"""

from __future__ import annotations

import math

from studies.interchange.archive.reader import ArchiveReader
from studies.interchange.panel_ids import PANEL_ID_FIELDS
from studies.models import PANELS, Participant, ParticipantState, Recruitment, Study

# (field, kind, longest text): the texts as long as their columns, so a longer one is refused by field, not
# by the database.
TEXTS = (
    ("state_reason", 300),
    ("panel_id", 64),
    ("panel_study_id", 64),
    ("panel_session_id", 64),
    ("panel_status", 20),
    ("excluded_reason", 300),
)
TIMES = ("state_changed_at", "started_at", "panel_status_at", "excluded_at")


def _t(value) -> str | None:
    return value.isoformat() if value is not None else None


def participant_state_exported(participant: Participant, *, panel_ids: bool = False) -> dict:
    """The fields above of one participant, JSON-ready (reissue_of as the code: select_related it); the
    panel ids left out unless `panel_ids`."""
    fields = {
        "state": participant.state,
        "state_changed_at": _t(participant.state_changed_at),
        "state_reason": participant.state_reason,
        "started_at": _t(participant.started_at),
        "plan_row": participant.plan_row,
        "reissue_of": _reissued_code(participant),
        "panel_id": participant.panel_id,
        "panel_study_id": participant.panel_study_id,
        "panel_session_id": participant.panel_session_id,
        "panel_status": participant.panel_status,
        "panel_status_at": _t(participant.panel_status_at),
        "excluded_at": _t(participant.excluded_at),
        "excluded_reason": participant.excluded_reason,
        "excluded_agreement": participant.excluded_agreement,
        "excluded_manually": participant.excluded_manually,
    }
    return fields if panel_ids else {k: v for k, v in fields.items() if k not in PANEL_ID_FIELDS}


def _reissued_code(participant: Participant) -> str | None:
    """The code of the participant whose row this one re-uses; none for a preview's (never exported)."""
    freed = participant.reissue_of if participant.reissue_of_id else None
    return freed.code if freed is not None and freed.preview_at is None else None


def recruitment_exported(study: Study) -> dict | None:
    """`$.recruitment`: the study's panel, or null without recruitment settings."""
    recruitment = Recruitment.objects.filter(study=study).first()
    return {"panel": recruitment.panel} if recruitment is not None else None


def recruitment_imported(r: ArchiveReader, data, study: Study) -> None:
    """The study's recruitment settings from `$.recruitment` (absent or null: none made). The study is paused
    (import_design.study_imported), so its new public link takes no arrivals until the researcher opens it."""
    item = data.get("recruitment")
    if item is None:
        return
    r.obj(item, "$.recruitment", data)
    panel = r.get(item, "panel", "$.recruitment", str)
    known = [name for name, _label in PANELS]
    if panel not in known:
        r.fail(item, "$.recruitment.panel", f"{panel!r} is not one of {', '.join(known)}")
    Recruitment.objects.create(study=study, panel=panel)


def participant_state_read(r: ArchiveReader, item, where: str) -> dict:
    """The fields above as Participant's keyword arguments (reissue_of left out: participants_imported links
    it once every participant exists); a value of the wrong kind is refused by file, line and field."""
    state = r.get(item, "state", where, str, null=True, default=None)
    if state is not None and state not in ParticipantState.values:
        r.fail(item, f"{where}.state", f"{state!r} is not one of {', '.join(ParticipantState.values)}")
    fields: dict = {"state": state}
    for name, longest in TEXTS:
        value = r.get(item, name, where, str, null=True, default=None)
        if value is not None and len(value) > longest:
            r.fail(item, f"{where}.{name}", f"longer than {longest} characters")
        fields[name] = value
    for name in TIMES:
        fields[name] = r.get(item, name, where, "time", null=True, default=None)
    plan_row = r.get(item, "plan_row", where, int, null=True, default=None)
    if plan_row is not None and not 0 <= plan_row <= 2**31 - 1:
        r.fail(item, f"{where}.plan_row", f"{plan_row} is not a row of the plan (0 or more)")
    fields["plan_row"] = plan_row
    agreement = r.get(item, "excluded_agreement", where, (int, float), null=True, default=None)
    if agreement is not None and (isinstance(agreement, bool) or not math.isfinite(agreement)):
        r.fail(item, f"{where}.excluded_agreement", f"{agreement!r} is not a number")
    fields["excluded_agreement"] = None if agreement is None else float(agreement)
    fields["excluded_manually"] = r.get(item, "excluded_manually", where, bool, default=False)
    return fields


def reissues_linked(r: ArchiveReader, pending: list[tuple[Participant, dict, str]], by_code: dict) -> None:
    """Each participant's `reissue_of` (a code in the archive) linked to that participant, once every one is
    imported: the code must be another participant's, and a freed row is re-issued once."""
    reissued: set[str] = set()
    for participant, item, where in pending:
        code = r.get(item, "reissue_of", where, str, null=True, default=None)
        if code is None:
            continue
        if code not in by_code or code == participant.code:
            r.fail(item, f"{where}.reissue_of", f"no other participant {code!r} in the archive")
        r.once(reissued, code, item, f"{where}.reissue_of", f"participant {code!r}'s row is re-issued twice")
        participant.reissue_of = by_code[code]
        participant.save(update_fields=["reissue_of"])
