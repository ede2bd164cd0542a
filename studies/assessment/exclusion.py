"""The exclusion rule on a participant's agreement with the reference (docs/recruitment.md, "Checks").

A study's rule (Study.exclusion_min_agreement, exclusion_measure, exclusion_min_documents) reads the agreement
the assessment pages already show (adjudication.participant_reference_agreement: the participant's own grades
against the newest reference version). A participant below the minimum, on at least the least number of
documents in common, is marked excluded with the measure, the figure and the minimum; every other
participant's mark is cleared. Only the marks on Participant change: sessions, judgments and events stay as
stored, and the dashboards leave the marked participants' sessions out unless asked (excluded=include).

The rule is re-applied on its own whenever its inputs change (connect_receivers, from StudiesConfig.ready):
when a new reference version is committed (studies.signals.reference_version_committed) and when sessions end
(studies.signals.sessions_finished, once their transaction has committed). With the rule off nothing runs.
Each mark set or cleared is audited (AuditEntry "exclusion_marked" / "exclusion_cleared", with what triggered
it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from studies.assessment.adjudication import participant_reference_agreement
from studies.errors import AssessmentError
from studies.models import AuditAction, AuditEntry, Participant, Study

# The measures a rule can use: the columns of the agreement page's per-participant table.
EXCLUSION_MEASURES = {
    "kappa_linear": "linear weighted kappa",
    "kappa_quadratic": "quadratic weighted kappa",
    "percent": "percent agreement",
}
DEFAULT_MEASURE = "kappa_linear"
DEFAULT_MIN_DOCUMENTS = 5


def rule_errors(*, min_agreement, measure, min_documents) -> dict[str, str]:
    """What is wrong with a rule's settings, by field name (empty when they are fine). A null minimum is
    off."""
    errors = {}
    if min_agreement is not None:
        if (
            isinstance(min_agreement, bool)
            or not isinstance(min_agreement, (int, float))
            or not math.isfinite(min_agreement)
        ):
            errors["exclusion_min_agreement"] = "a number from 0 to 1, or null for no rule"
        elif not 0 <= min_agreement <= 1:
            errors["exclusion_min_agreement"] = f"a number from 0 to 1, not {min_agreement}"
    if measure is not None and measure not in EXCLUSION_MEASURES:
        errors["exclusion_measure"] = f"one of {', '.join(EXCLUSION_MEASURES)}, not {str(measure)[:40]!r}"
    if min_documents is not None and (
        isinstance(min_documents, bool) or not isinstance(min_documents, int) or min_documents < 1
    ):
        errors["exclusion_min_documents"] = "a whole number of at least 1"
    return errors


@dataclass(frozen=True)
class ExclusionOutcome:
    excluded: tuple[str, ...]  # participant codes marked, in enrolment order
    cleared: tuple[str, ...]  # codes whose earlier mark was cleared
    reference_number: int | None  # the reference version read (None: the study has none)


def exclusion_apply(*, study: Study, trigger: str = "rule saved") -> ExclusionOutcome:
    """Apply the study's rule now: mark exactly the participants below the minimum (with at least the least
    number of documents in common and a defined figure), clear every other mark. Rule off or no reference
    version: every mark is cleared. A participant already marked keeps the time of their first mark (the
    reason and figure are brought up to date); each newly set or cleared mark is audited with `trigger`."""
    minimum = study.exclusion_min_agreement
    measure = study.exclusion_measure or DEFAULT_MEASURE
    least = study.exclusion_min_documents or DEFAULT_MIN_DOCUMENTS
    if measure not in EXCLUSION_MEASURES:
        raise AssessmentError(f"unknown agreement measure {measure!r}")
    version, per_participant, _per_scenario = (
        participant_reference_agreement(study=study) if minimum is not None else (None, [], [])
    )
    below: dict[str, tuple[float, int]] = {}
    for row in per_participant:
        figure = getattr(row, measure)
        if row.n >= least and figure == figure and figure < minimum:  # figure == figure: not NaN
            below[row.label] = (figure, row.n)
    now = timezone.now()
    with transaction.atomic():
        # A researcher's own exclusion (participant_exclude) is theirs to clear: the rule leaves it alone.
        participants = Participant.objects.select_for_update().filter(
            study=study, preview_at__isnull=True, excluded_manually=False
        )
        marked = set(participants.filter(excluded_at__isnull=False).values_list("code", flat=True))
        audit = []
        number = getattr(version, "number", None)  # there is a version whenever someone is below
        for code, (figure, n) in below.items():
            reason = (
                f"{EXCLUSION_MEASURES[measure]} with reference version {number} is {figure:.3f}, "
                f"below the study's minimum {minimum:g} (on {n} documents in common)"
            )[:300]
            if code in marked:
                participants.filter(code=code).update(excluded_reason=reason, excluded_agreement=figure)
                continue
            participants.filter(code=code).update(
                excluded_at=now, excluded_reason=reason, excluded_agreement=figure
            )
            audit.append(
                AuditEntry(
                    study=study,
                    participant_code=code,
                    action=AuditAction.EXCLUSION_MARKED,
                    detail={"trigger": trigger[:120], "reason": reason},
                )
            )
        cleared = sorted(marked - set(below))
        if cleared:
            participants.filter(code__in=cleared).update(
                excluded_at=None, excluded_reason=None, excluded_agreement=None
            )
            audit.extend(
                AuditEntry(
                    study=study,
                    participant_code=code,
                    action=AuditAction.EXCLUSION_CLEARED,
                    detail={"trigger": trigger[:120]},
                )
                for code in cleared
            )
        AuditEntry.objects.bulk_create(audit)
    order = [row.label for row in per_participant]
    return ExclusionOutcome(
        excluded=tuple(code for code in order if code in below),
        cleared=tuple(cleared),
        reference_number=version.number if version else None,
    )


def participant_exclude(*, participant: Participant, by, reason: str) -> None:
    """A researcher excludes a participant (after replaying a session, say): marked as the rule marks, with
    who and why, audited; the dashboards then leave their sessions out unless asked. Kept by the rule."""
    reason = " ".join(str(reason).split())[:240] or "no reason given"
    with transaction.atomic():
        row = Participant.objects.select_for_update().get(pk=participant.pk)
        row.excluded_at = row.excluded_at or timezone.now()
        row.excluded_reason = f"excluded by {by.get_username()}: {reason}"[:300]
        row.excluded_agreement = None
        row.excluded_manually = True
        row.save(update_fields=["excluded_at", "excluded_reason", "excluded_agreement", "excluded_manually"])
        AuditEntry.objects.create(
            study_id=row.study_id,
            participant_code=row.code,
            action=AuditAction.EXCLUSION_MARKED,
            detail={"trigger": "researcher", "by": by.get_username(), "reason": reason},
        )


def participant_include(*, participant: Participant, by) -> None:
    """A researcher takes back their exclusion (audited); the study's rule applies to them again."""
    with transaction.atomic():
        row = Participant.objects.select_for_update().get(pk=participant.pk)
        if not row.excluded_manually:
            raise AssessmentError("This participant was not excluded by a researcher.")
        row.excluded_at = row.excluded_reason = row.excluded_agreement = None
        row.excluded_manually = False
        row.save(update_fields=["excluded_at", "excluded_reason", "excluded_agreement", "excluded_manually"])
        AuditEntry.objects.create(
            study_id=row.study_id,
            participant_code=row.code,
            action=AuditAction.EXCLUSION_CLEARED,
            detail={"trigger": "researcher", "by": by.get_username()},
        )
    exclusion_apply(study=row.study, trigger="a researcher's exclusion taken back")


def excluded_codes(study: Study) -> tuple[str, ...]:
    """The codes of the study's participants marked excluded, sorted."""
    return tuple(
        sorted(
            Participant.objects.filter(study=study, excluded_at__isnull=False).values_list("code", flat=True)
        )
    )


# --- re-applied on its own when its inputs change ------------------------------------------------------


def exclusion_reapply(*, study_id: int, trigger: str) -> ExclusionOutcome | None:
    """Re-apply the study's rule if it is on (None, and nothing read but the study, when it is off)."""
    study = Study.objects.filter(pk=study_id, exclusion_min_agreement__isnull=False).first()
    if study is None:
        return None
    return exclusion_apply(study=study, trigger=trigger)


def on_reference_version_committed(sender, *, study_id: int, version=None, **kwargs) -> None:
    """Sent once the version is committed (studies/assessment/references.py): it is the newest, read it
    now."""
    number = getattr(version, "number", None)
    exclusion_reapply(study_id=study_id, trigger=f"reference version {number} committed")


def on_sessions_finished(sender, *, study_id: int, session_ids=(), **kwargs) -> None:
    """Sent inside the transaction that ended the sessions: their judgments are read once it has committed.
    One cheap query decides, while the rule is off, that nothing is to be done."""
    if not Study.objects.filter(pk=study_id, exclusion_min_agreement__isnull=False).exists():
        return
    trigger = f"{len(session_ids)} session(s) finished"
    transaction.on_commit(lambda: exclusion_reapply(study_id=study_id, trigger=trigger), robust=True)


def connect_receivers() -> None:
    from studies.signals import reference_version_committed, sessions_finished

    reference_version_committed.connect(
        on_reference_version_committed, dispatch_uid="exclusion.reference_version"
    )
    sessions_finished.connect(on_sessions_finished, dispatch_uid="exclusion.sessions_finished")
