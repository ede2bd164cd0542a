"""Completion: the code (and the panel's URL, or MTurk's form) a participant who ended receives."""

from __future__ import annotations

from dataclasses import dataclass, field

from studies.kernel.states import state_of
from studies.models import AuditAction, AuditEntry, Participant, ParticipantState, Recruitment
from studies.participation.recruitment.codes import POOL_EMPTY, completion_code_take
from studies.participation.recruitment.panels import completion_url_template, mturk_submit_url


@dataclass(frozen=True)
class Completion:
    kind: str  # completed | screened_out | failed_checks
    code: str
    redirect_url: str  # "" when the panel takes the code pasted, or MTurk's form is posted
    # MTurk: the externalSubmit address the page posts assignmentId and the code to ("" otherwise).
    submit_url: str = ""
    submit_fields: dict = field(default_factory=dict)
    # Why there is no code yet (a pool of codes ran out); "" when there is one.
    message: str = ""


def mturk_submit_to_of(participant: Participant) -> str | None:
    """The turkSubmitTo an MTurk participant arrived with (their arrival's audit entry), if still allowed."""
    detail = (
        AuditEntry.objects.filter(
            study_id=participant.study_id,
            participant_code=participant.code,
            action=AuditAction.PARTICIPANT_JOINED,
        )
        .order_by("at", "pk")
        .values_list("detail", flat=True)
        .first()
    )
    host = detail.get("turk_submit_to") if isinstance(detail, dict) else None
    return host if mturk_submit_url(host) else None


def outcome_code(participant: Participant, recruitment: Recruitment) -> tuple[str, str] | None:
    """(kind, the study's code for it) of a participant who ended with a code: completed, screened_out or
    failed_checks; None otherwise. Reads only: a completer in a per-participant or pool mode receives their
    own code instead (completion_of hands it out)."""
    state = state_of(participant)
    if state == ParticipantState.COMPLETED:
        return "completed", recruitment.code_completed
    if state != ParticipantState.SCREENED_OUT:
        return None
    if (participant.state_reason or "").startswith("failed checks"):
        return "failed_checks", recruitment.code_failed_checks
    return "screened_out", recruitment.code_screened_out


def completion_of(participant: Participant) -> Completion | None:
    """The code (and the panel URL) a participant who ended receives; None while they have not ended, or
    ended without one (withdrawn, returned, timed out: the panel handles those). In a per-participant code
    mode the first ask hands their code out (stored: every later ask returns it)."""
    if state_of(participant) not in (ParticipantState.COMPLETED, ParticipantState.SCREENED_OUT):
        return None
    recruitment = Recruitment.objects.filter(study_id=participant.study_id).first()
    if recruitment is None:
        return None
    kind, code = outcome_code(participant, recruitment) or ("", "")
    if kind == "completed" and recruitment.code_mode != "study":
        # Their own code (recruitment/codes.py), handed out at the first ask and stored.
        own = completion_code_take(participant=participant, recruitment=recruitment)
        if own is None:
            return Completion(kind, "", "", message=POOL_EMPTY.format(code=participant.code))
        code = own
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
