"""Attention and comprehension checks: the study's items, the participant's progress through them, and
each answer recorded with its outcome (past the preset's limit the participant is screened out)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.db import transaction

from studies.errors import Refused
from studies.models import EventOrigin, Participant, Recruitment
from studies.participation.events.rules import (
    client_id_check,
    event_create,
    participant_check_consented,
    server_ack_stored,
)
from studies.participation.recruitment.states import participant_screen_out

# Presets that follow panel policy. Prolific: attention checks are instructional ("choose X"), and a
# participant may be rejected only after failing two of them; comprehension checks come early, with a second
# chance, and a participant who fails one twice is screened out (paid for their time, asked to return), not
# rejected.
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
    seen: set[str] = set()
    for number, item in enumerate(items, start=1):
        errors += [f"check {number}: {problem}" for problem in _check_item_errors(item, seen)]
    return errors


def _check_item_errors(item, seen: set[str]) -> list[str]:
    """What is wrong with one check item; `seen` holds the names of the items before it."""
    if not isinstance(item, dict):
        return ["an object with name, kind, label, choices and answer"]
    errors = []
    unknown = sorted(str(k) for k in item if k not in ("name", "kind", "label", "choices", "answer"))
    if unknown:
        errors.append(f"unknown key(s) {', '.join(unknown)}")
    name = item.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", name) or name in seen:
        errors.append("name is 1-64 letters, digits or _, once")
    if isinstance(name, str):  # a list or an object as a name is refused above, never hashed
        seen.add(name)
    if item.get("kind") not in CHECK_KINDS:
        errors.append("kind is attention or comprehension")
    label, choices, answer = item.get("label"), item.get("choices"), item.get("answer")
    if not isinstance(label, str) or not 1 <= len(label.strip()) <= 1000:
        errors.append("label is a text of 1-1000 characters")
    if (
        not isinstance(choices, list)
        or not 2 <= len(choices) <= 20
        or not all(isinstance(c, str) and 1 <= len(c.strip()) <= 200 for c in choices)
        or len(set(choices)) != len(choices)
    ):
        errors.append("choices are 2-20 distinct texts of 1-200 characters")
    elif answer not in choices:
        errors.append("answer must be one of its choices")
    return errors


def gold_failures(participant: Participant) -> int:
    """Gold documents judged wrongly (studies/participation/way/gold.py): each counts as a failed attention
    check."""
    return participant.events.filter(
        type="gold", origin=EventOrigin.SERVER, payload__ack__passed=False
    ).count()


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
    """Where the participant is in the study's checks, from their "check" events (the record of each
    answer)."""
    if recruitment is None:
        recruitment = Recruitment.objects.filter(study_id=participant.study_id).first()
    items = check_items(recruitment)
    progress = CheckProgress()
    if recruitment is None or not items:
        return progress
    policy = CHECK_PRESETS[recruitment.checks.get("preset", "prolific")]
    answered: dict[str, list[bool]] = {}
    checks = participant.events.filter(type="check", origin=EventOrigin.SERVER)
    for ack in checks.order_by("id").values_list("payload__ack", flat=True):
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
    stored = server_ack_stored(participant, client_event_id)  # a client's row holding the id is refused
    if stored is not None:
        return stored
    participant_check_consented(participant)
    recruitment = Recruitment.objects.filter(study_id=participant.study_id).first()
    progress = checks_progress(participant, recruitment)
    item = next((i for i in progress.pending if i["name"] == name), None)
    if item is None or recruitment is None:  # no pending item without the study's checks
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
