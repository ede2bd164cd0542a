"""A study's life cycle (draft, open, paused, closed) and its preview ("Try it as a participant").

The life cycle (docs/study-life-cycle.md) is the one switch for "does this study take participants": the study
page and the recruitment page (its public link) show and change the same status.

- draft: a new study (services.study_create), until the researcher opens it, which only a study whose set-up
  checklist passes can be (design/checklist.py). No participant: enrolment and the public link answer that
  the study is not open yet. The preview works, to try the set-up.
- open: participants are enrolled, join from the public link, consent, answer, start sessions. A null
  status (a study from before the draft state, or written by an older node) reads as open.
- paused: no new participant (enrolment, public link) and no new step (consent, questionnaire, a new
  session); the links answer "paused" politely. Nothing in flight is lost: a session already started can be
  finished (its event batches, its end and its post-task answers are accepted), so the events in a browser's
  outbox when the researcher pressed "Pause" are stored. Withdrawal is always possible.
- closed: the same refusals, for good: a closed study does not reopen (its data is what gets analysed; a
  study that must run again is a new study). Its data are kept, scored and exported as before.

Transitions: draft -> open (the checklist passing), draft -> closed (given up), open -> paused,
open -> closed, paused -> open, paused -> closed. Nothing goes back to draft. Each change is audited.

The preview: a researcher's try-out participant, marked by `Participant.preview_at`, enrolled outside the
study's plan (an enrolment index from PREVIEW_INDEX_BASE up, so no real plan row is taken) and working the
plan's first order. Its rows are left out of the balance tables, the scoring runs and every export; "Delete
preview data" removes them all. A preview works while the study is paused (the researcher checks a change)
but not once it is closed.
"""

from __future__ import annotations

import secrets

from django.db import transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from studies.design.checklist import study_checklist, study_ready
from studies.design.orders import design_problem, participant_order
from studies.errors import DesignError, EnrolmentRefusedError, Refused, StudyStatusError
from studies.models import Assignment, AuditAction, AuditEntry, Participant, SearchSession, Study

DRAFT, OPEN, PAUSED, CLOSED = "draft", "open", "paused", "closed"
TRANSITIONS = {DRAFT: {OPEN, CLOSED}, OPEN: {PAUSED, CLOSED}, PAUSED: {OPEN, CLOSED}, CLOSED: set()}
# Preview participants take enrolment indexes from here: far above any real study's, inside PostgreSQL's
# integer (2**31 - 1), so the real ones (0, 1, 2... by count or by max + 1 of the non-preview) never meet
# them.
PREVIEW_INDEX_BASE = 2_000_000_000

PARTICIPANT_MESSAGES = {
    DRAFT: "This study is not open yet: its researchers are still setting it up. Please come back to this "
    "link later.",
    PAUSED: "This study is paused for a while. Nothing you have done is lost; please come back to this link "
    "later.",
    CLOSED: "This study is closed and takes no new answers. Thank you for your interest.",
}
# What the public link tells a new arrival: they have done nothing yet, so nothing of theirs is "kept".
ARRIVAL_MESSAGES = {
    **PARTICIPANT_MESSAGES,
    PAUSED: "This study is paused for a while and takes no new participants just now. Please come back to "
    "this link later.",
}


def status_of(study: Study) -> str:
    return study.status or OPEN


ENROLMENT_REFUSALS = {
    DRAFT: "the study is not open yet: a draft takes no participants until its set-up checklist passes and "
    "it is opened (Open, on the study page)",
    PAUSED: "the study is paused: no new participants are enrolled until it is open again (Open, on the "
    "study page)",
    CLOSED: "the study is closed: a closed study enrols no new participants and does not reopen (a study "
    "that must run again is a new study: export it and import the archive)",
}


def study_check_accepting(study: Study) -> None:
    """Researcher side: refuse a new participant (enrolment, page or API) unless the study is open."""
    status = status_of(study)
    if status != OPEN:
        raise EnrolmentRefusedError(ENROLMENT_REFUSALS[status])


def participant_check_accepting(participant: Participant) -> None:
    """Participant side: refuse a new step (consent, questionnaire, a new session, a public-link join) unless
    the study is open; a preview participant goes on while the study is a draft or paused."""
    status = status_of(participant.study)
    if status == OPEN or (status in (DRAFT, PAUSED) and participant.preview_at is not None):
        return
    raise Refused(PARTICIPANT_MESSAGES[status])


def study_status_change(*, study: Study, status: str, by) -> Study:
    """Move the study to `status` under TRANSITIONS; an AuditEntry records who and when. Re-asking the current
    status does nothing (a double click). A draft opens only once its set-up checklist passes."""
    if status not in TRANSITIONS or status == DRAFT:
        raise StudyStatusError(
            f"not a study status to move to: {str(status)[:20]!r} (open, paused or closed)"
        )
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        current = status_of(study)
        if status == current:
            return study
        if status not in TRANSITIONS[current]:
            raise StudyStatusError(
                f"a {current} study cannot be made {status}"
                + (": a closed study stays closed" if current == CLOSED else "")
                + (": open it first (a draft has no participants to pause)" if current == DRAFT else "")
            )
        if current == DRAFT and status == OPEN:
            _check_ready_to_open(study)
        study.status, study.status_changed_at = status, timezone.now()
        study.save(update_fields=["status", "status_changed_at"])
        AuditEntry.objects.create(
            study=study,
            action=AuditAction.STUDY_STATUS_CHANGED,
            detail={"from": current, "to": status, "by": getattr(by, "username", "")},
        )
    return study


def study_missing_to_open(*, study: Study) -> list[str]:
    """What the set-up checklist still misses (its required steps), in its order: a draft opens when empty."""
    steps = study_checklist(study=study)
    if study_ready(steps):
        return []
    return [
        item for step in steps if step.required and not step.done for item in step.missing or [step.title]
    ]


def _check_ready_to_open(study: Study) -> None:
    missing = study_missing_to_open(study=study)
    if missing:
        raise StudyStatusError(
            "the study cannot open before its set-up checklist passes: " + " ".join(missing[:5])
        )


def study_counts(*, study: Study) -> dict[str, int]:
    """What the study page shows beside the status, in two queries: participants (real ones and the
    preview's), how many started, and the real ones' sessions (open and finished)."""
    real, preview = Q(preview_at__isnull=True), Q(preview_at__isnull=False)
    counts = Participant.objects.filter(study=study).aggregate(
        participants=Count("pk", filter=real),
        started=Count("pk", filter=real & Q(started_at__isnull=False)),
        preview_participants=Count("pk", filter=preview),
    )
    counts.update(
        SearchSession.objects.filter(
            assignment__participant__study=study,
            assignment__participant__preview_at__isnull=True,
        ).aggregate(sessions=Count("pk"), sessions_open=Count("pk", filter=Q(ended_at__isnull=True)))
    )
    counts["sessions_ended"] = counts["sessions"] - counts["sessions_open"]
    return counts


@transaction.atomic
def preview_start(*, study: Study, by) -> Participant:
    """A fresh preview participant working the plan's first order; the design is not locked by it."""
    study = Study.objects.select_for_update().get(pk=study.pk)
    if status_of(study) == CLOSED:
        raise StudyStatusError("the study is closed; a preview is for a study that can still run")
    scenarios = list(study.scenarios.order_by("id"))
    systems = list(study.systems.order_by("id"))
    problem = design_problem(scenarios, systems)
    if problem:
        raise DesignError(f"{problem} before trying it as a participant")
    highest = Participant.objects.filter(study=study, preview_at__isnull=False).aggregate(
        m=Max("enrolment_index")
    )
    index = max(PREVIEW_INDEX_BASE - 1, highest["m"] or 0) + 1
    now = timezone.now()
    participant = Participant.objects.create(
        study=study, code=f"PREVIEW-{secrets.token_hex(3)}", enrolment_index=index, preview_at=now
    )
    order = participant_order(study=study, scenarios=scenarios, systems=systems, row=0)
    Assignment.objects.bulk_create(
        Assignment(participant=participant, position=position, scenario=scenario, system=system)
        for position, (scenario, system) in enumerate(order, start=1)
    )
    AuditEntry.objects.create(
        study=study,
        action=AuditAction.PREVIEW_STARTED,  # no code: a preview is never exported
        detail={"by": getattr(by, "username", "")},
    )
    return participant


@transaction.atomic
def preview_delete(*, study: Study, by=None) -> int:
    """Delete every preview participant of the study with all it holds (sessions, queries, events...).
    Returns how many participants went."""
    previews = Participant.objects.filter(study=study, preview_at__isnull=False)
    count = previews.count()
    if count:
        previews.delete()
        AuditEntry.objects.create(
            study=study,
            action=AuditAction.PREVIEW_DELETED,
            detail={"participants": count, "by": getattr(by, "username", "")},
        )
    return count
