"""What the recruitment page shows of the checks: each participant's gold answers and failed checks (the
server's "check" and "gold" events, which the participant's way writes) and each scenario's gold pair."""

from __future__ import annotations

from dataclasses import dataclass, field

from studies.kernel.gold import gold_pairs
from studies.models import Event, EventOrigin, ParticipantState


@dataclass
class CheckOutcome:
    """One participant's checks, for the recruitment page: each gold answer and each failed check."""

    code: str
    state: str
    gold: list = field(default_factory=list)  # (scenario code, passed, reason)
    failed_checks: list = field(default_factory=list)  # reasons

    @property
    def gold_failed(self) -> int:
        return sum(not passed for _, passed, _ in self.gold)


def check_outcomes(*, study) -> list[CheckOutcome]:
    """Every participant (not a preview) with a check or gold answer, in enrolment order: one query."""
    outcomes: dict[int, CheckOutcome] = {}
    rows = (
        Event.objects.filter(
            participant__study=study,
            participant__preview_at__isnull=True,
            type__in=("check", "gold"),
            origin=EventOrigin.SERVER,
        )
        .order_by("participant__enrolment_index", "id")
        .values_list("participant_id", "participant__code", "participant__state", "type", "payload__ack")
    )
    for participant_id, code, state, kind, ack in rows:
        if not isinstance(ack, dict) or not ack.get("ok"):
            continue
        outcome = outcomes.setdefault(participant_id, CheckOutcome(code, state or ParticipantState.INVITED))
        if kind == "gold":
            outcome.gold.append((ack.get("scenario", ""), bool(ack.get("passed")), ack.get("reason", "")))
        elif not ack.get("passed"):
            outcome.failed_checks.append(ack.get("reason", ""))
    return list(outcomes.values())


def gold_pairs_of(*, study) -> list[tuple]:
    """(scenario, GoldPair or None) for each of the study's scenarios: what the recruitment page shows."""
    scenarios = list(study.scenarios.order_by("id"))
    pairs = gold_pairs(study_id=study.pk, topic_ids={s.topic_id for s in scenarios})
    return [(scenario, pairs.get(scenario.topic_id)) for scenario in scenarios]
