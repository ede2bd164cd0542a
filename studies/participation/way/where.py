"""Where a participant is on their way, as the page and the participant API both show it: one read, so the
private link's pages (studies/participation/pages/views.py) and an external front-end (docs/api.md, "The whole
way") never disagree about the next step.

Opening the way counts as a visit (recruitment.participant_visit: an overdue participant is timed out; the
study clock does not start on a read, only when the participant acts) and ends a search whose time limit has
passed, as the page always did.
"""

from __future__ import annotations

from dataclasses import dataclass

from studies.design import lifecycle
from studies.errors import Refused
from studies.kernel import steps
from studies.kernel.steps import ParticipantStep, StepKind
from studies.models import Participant
from studies.participation.events import rules
from studies.participation.recruitment.checks import checks_progress
from studies.participation.recruitment.completion import Completion, completion_of
from studies.participation.recruitment.states import ENDED_MESSAGES, participant_visit
from studies.participation.recruitment.sweep import study_sweep_throttled

# Steps that go on while the study is paused or closed: a session already started is finished.
GOES_ON_WHEN_PAUSED = frozenset(
    {StepKind.SEARCH, StepKind.GOLD, StepKind.POST_TASK, StepKind.DONE, StepKind.WITHDRAWN, StepKind.DECLINED}
)


@dataclass
class Where:
    """kind: ended (returned, timed out, screened out: `message`, `completion`) | paused (`message`, `status`)
    | checks (the study's attention and comprehension checks before the first task: `check`, `retry`) | one of
    ParticipantStep's kinds (`step`; `completion` when done). `check` holds the item with its answer: show
    `check_shown(check)`."""

    kind: StepKind
    step: ParticipantStep | None = None
    message: str = ""
    status: str = ""
    check: dict | None = None
    retry: bool = False  # the check shown was just answered wrongly, with a try left
    completion: Completion | None = None


def participant_where(*, participant: Participant) -> Where:
    # Without a scheduler the study's sweep runs here too, at most once per OVERDUE_SWEEP_SECONDS per study.
    if study_sweep_throttled(study=participant.study) is not None:
        participant.refresh_from_db(fields=["state", "state_changed_at", "state_reason", "started_at"])
    state = participant_visit(participant=participant)
    if state in ENDED_MESSAGES:
        return Where(
            StepKind.ENDED,
            message=ENDED_MESSAGES[state],
            completion=completion_of(participant),
        )
    step = steps.participant_step(participant=participant)
    if (
        step.kind == StepKind.SEARCH
        and step.session is not None  # always, for a search step
        and rules.session_expire_if_due(session=step.session)
    ):
        step = steps.participant_step(participant=participant)
    if step.kind not in GOES_ON_WHEN_PAUSED:
        try:
            lifecycle.participant_check_accepting(participant)
        except Refused as refusal:
            return Where(
                StepKind.PAUSED, step, message=refusal.message, status=lifecycle.status_of(participant.study)
            )
    if step.kind in (StepKind.PRE_TASK, StepKind.SCENARIO) and step.position == 1:
        checks = checks_progress(participant)
        if checks.pending:
            return Where(
                StepKind.CHECKS,
                step,
                check=checks.pending[0],
                retry=checks.last_wrong == checks.pending[0]["name"],
            )
    completion = completion_of(participant) if step.kind == StepKind.DONE else None
    return Where(step.kind, step, completion=completion)


def check_shown(item: dict) -> dict:
    """A check item as the participant sees it: never its answer."""
    return {
        "name": item["name"],
        "kind": item["kind"],
        "label": item["label"],
        "choices": list(item["choices"]),
    }
