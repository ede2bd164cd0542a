"""Attention and comprehension checks: the study's items, their presets, and the participant's progress
through them (each answer is recorded with its outcome by studies/participation/way/check_answers.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from studies.models import EventOrigin, Participant, Recruitment

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
