"""The participants' panel ids (Prolific, MTurk, a generic pool): kept for the lab, never in a file meant to
be shared unless asked for by name (docs/recruitment.md, "Panel ids stay in the lab").

A panel id identifies a person on the panel, so the shared exports (the tidy tables' participants.csv, the
JSON archive) leave PANEL_ID_FIELDS out. The study's owner alone may ask for them back (`?include=panel_ids`
on a download or the API, `--include-panel-ids` on a command), and gets the lab-only panel-ids.csv
(`panel_id_rows`) for paying and reconciling. Anyone else who asks is refused with the reason, never served
the file without them as if that were what they asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sessionlab.rounds import in_rounds
from studies.accounts.access import panel_ids_visible_to
from studies.errors import ExportError, StudyOwnerOnlyError
from studies.kernel.states import state_of
from studies.models import CompletionCode, Participant, Recruitment, Study
from studies.participation.recruitment.completion import outcome_code

# Participant's columns that identify a person on the panel (the panel's name and status do not).
PANEL_ID_FIELDS = ("panel_id", "panel_study_id", "panel_session_id")
INCLUDE_PANEL_IDS = "panel_ids"  # the one thing `include` names
INCLUDABLE = (INCLUDE_PANEL_IDS,)
OWNER_ONLY = (
    "include=panel_ids: only the study's owner may download its participants' panel ids (they identify "
    "people on the panel); leave include out for the file meant to be shared"
)
PANEL_ID_CSV_OWNER_ONLY = (
    "panel-ids.csv: only the study's owner may download its participants' panel ids (they identify people "
    "on the panel)"
)

PANEL_ID_COLUMNS = [
    "participant",
    "panel",
    *PANEL_ID_FIELDS,
    "state",
    "panel_status",
    "panel_status_at",
    "completion_code",
]
PARTICIPANTS_PER_CHUNK = 500


def included(values: Iterable[str]) -> frozenset[str]:
    """What `include` asks for: its values (repeated, or separated by commas), each one of INCLUDABLE; an
    ExportError names any other."""
    asked = {part.strip() for value in values for part in value.split(",")} - {""}
    unknown = sorted(asked - set(INCLUDABLE))
    if unknown:
        raise ExportError(
            f"include: {', '.join(repr(name[:40]) for name in unknown)} is not something an export includes "
            f"(one of: {', '.join(INCLUDABLE)})"
        )
    return frozenset(asked)


def panel_ids_asked(*, study: Study, user, include: Iterable[str]) -> bool:
    """Whether a request's `include` values ask for the panel ids, and may: an ExportError for an unknown
    value, a StudyOwnerOnlyError (OWNER_ONLY) when someone other than the owner asks."""
    if INCLUDE_PANEL_IDS not in included(include):
        return False
    if not panel_ids_visible_to(user=user, study=study):
        raise StudyOwnerOnlyError(OWNER_ONLY)
    return True


def panel_id_rows(*, study: Study, chunk_size: int = PARTICIPANTS_PER_CHUNK) -> Iterator[list]:
    """panel-ids.csv (header first): a row per participant who came with a panel id, in enrolment order,
    with the completion code they were shown (their own one in a per-participant or pool mode, empty until
    it is handed out; the study's code for their outcome otherwise; empty when they have none)."""
    yield list(PANEL_ID_COLUMNS)
    recruitment = Recruitment.objects.filter(study=study).first()
    panel = recruitment.panel if recruitment is not None else ""
    chosen = Participant.objects.filter(
        study=study, preview_at__isnull=True, panel_id__isnull=False
    ).order_by("enrolment_index")
    for participants in in_rounds(chosen, Participant.objects.all(), chunk_size):
        held = dict(
            CompletionCode.objects.filter(participant__in=participants).values_list("participant_id", "code")
        )
        for p in participants:
            yield [
                p.code,
                panel,
                *(getattr(p, name) or "" for name in PANEL_ID_FIELDS),
                state_of(p),
                p.panel_status or "",
                p.panel_status_at.isoformat() if p.panel_status_at is not None else "",
                _code_shown(p, recruitment, held),
            ]


def _code_shown(participant: Participant, recruitment: Recruitment | None, held: dict[int, str]) -> str:
    if recruitment is None:
        return ""
    outcome = outcome_code(participant, recruitment)
    if outcome is None:
        return ""
    kind, code = outcome
    if kind == "completed" and recruitment.code_mode != "study":
        return held.get(participant.pk, "")
    return code
