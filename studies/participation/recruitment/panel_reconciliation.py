"""Reconciliation: every disagreement between the panel's last word and our state, each with its reason."""

from __future__ import annotations

from dataclasses import dataclass

from studies.kernel.states import state_of
from studies.models import (
    ENDED_STATES,
    PanelNotification,
    Participant,
    ParticipantState,
    Recruitment,
    Study,
)
from studies.participation.recruitment.effort import study_flags


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
            rows.append(
                Disagreement(participant.code, participant.panel_id or "", ours, theirs or "—", reason)
            )
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


# Pairs (our state, the panel's status) that are a normal outcome, not a disagreement, each with what
# happened. The participant left (or was screened out) and the panel says so in its own words.
_LEFT_HERE = {
    ParticipantState.TIMED_OUT: "timed out here (the study time limit)",
    ParticipantState.RETURNED: "returned here (the panel's earlier word)",
    ParticipantState.WITHDRAWN: "withdrew here (or declined consent)",
    ParticipantState.SCREENED_OUT: "screened out here",
}
NORMAL_PAIRS: dict[tuple[str, str], str] = {
    **{
        (ours, "returned"): f"{what}, and returned the submission on the panel"
        for ours, what in _LEFT_HERE.items()
    },
    **{(ours, "timed_out"): f"{what}; the panel's own time ran out" for ours, what in _LEFT_HERE.items()},
    (ParticipantState.SCREENED_OUT, "screened_out"): "screened out here and on the panel",
    (ParticipantState.WITHDRAWN, "screened_out"): (
        "withdrew here (or declined consent) and submitted the screened-out code on the panel"
    ),
    # A screened-out participant submits the screened-out (or failed-checks) code: paid at the screening rate,
    # or, after failed checks, rejected (docs/recruitment.md, "Completion codes").
    (ParticipantState.SCREENED_OUT, "awaiting_review"): (
        "screened out here: a submission with the screened-out or failed-checks code (check which)"
    ),
    (ParticipantState.SCREENED_OUT, "approved"): "screened out here: approved at the screening rate",
    (ParticipantState.SCREENED_OUT, "rejected"): "screened out here (failed checks): rejected on the panel",
}


def normal_outcome(ours: str, theirs: str | None) -> str:
    """What happened, when our state and the panel's status are a normal pair (NORMAL_PAIRS); "" otherwise."""
    return NORMAL_PAIRS.get((ours, theirs), "") if theirs is not None else ""


def reconciliation_explained(*, study: Study) -> list[Disagreement]:
    """The participants whose state and the panel's differ as a normal outcome, each with what happened
    (`reason`): listed apart from the disagreements, which need the researcher."""
    participants = Participant.objects.filter(study=study, panel_id__isnull=False, panel_status__isnull=False)
    rows = []
    for participant in participants.order_by("enrolment_index"):
        ours = state_of(participant)
        if ours == participant.panel_status:  # the same word on both sides: nothing to explain
            continue
        if explanation := normal_outcome(ours, participant.panel_status):
            rows.append(
                Disagreement(
                    participant.code,
                    participant.panel_id or "",
                    ours,
                    participant.panel_status or "",
                    explanation,
                )
            )
    return rows


def _disagreement(ours: str, theirs: str | None, *, exported: bool) -> str:
    if normal_outcome(ours, theirs):  # a normal outcome (NORMAL_PAIRS), explained apart
        return ""
    if theirs is None:
        return "not in the panel's export, though they opened the link" if exported else ""
    if theirs in ("approved", "awaiting_review") and ours != ParticipantState.COMPLETED:
        return f"the panel has a submission, ours is {ours}: approve only with a completion code"
    if theirs == "rejected" and ours == ParticipantState.COMPLETED:
        return "completed here, rejected on the panel"
    if theirs == "returned" and ours not in (ParticipantState.RETURNED, ParticipantState.WITHDRAWN):
        return f"returned on the panel, {ours} here" + (
            ": their data stay (intention to treat)" if ours == ParticipantState.COMPLETED else ""
        )
    if theirs == "timed_out" and ours not in (
        ParticipantState.TIMED_OUT,
        ParticipantState.RETURNED,
        ParticipantState.WITHDRAWN,
    ):
        return f"timed out on the panel, {ours} here"
    if theirs == "screened_out" and ours != ParticipantState.SCREENED_OUT:
        return f"screened out on the panel, {ours} here"
    if theirs == "active" and ours in ENDED_STATES:
        return f"still active on the panel, {ours} here"
    return ""


@dataclass(frozen=True)
class FlaggedParticipant:
    """A participant whose tasks raise effort flags (recruitment/effort.py): speeders, scripted sessions,
    below the study's minimum-effort rules."""

    participant_code: str
    panel_id: str
    state: str
    codes: tuple[str, ...]
    reasons: tuple[str, ...]


def flagged_participants(*, study: Study) -> list[FlaggedParticipant]:
    """Every participant of the study with an effort flag, in enrolment order."""
    flags = study_flags(study.pk, Recruitment.objects.filter(study=study).first())
    rows = []
    for participant in Participant.objects.filter(pk__in=[pk for pk, f in flags.items() if f]).order_by(
        "enrolment_index"
    ):
        found = flags[participant.pk]
        rows.append(
            FlaggedParticipant(
                participant.code,
                participant.panel_id or "",
                state_of(participant),
                tuple(dict.fromkeys(flag.code for flag in found)),
                tuple(flag.text() for flag in found),
            )
        )
    return rows
