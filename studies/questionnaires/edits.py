"""What may change in a questionnaire once participants have answered it (docs/setting-up-a-study.md,
"Questionnaires"): a rule on two lists of items, no database.

An item someone answered keeps its name (its column in the exports), its kind, every choice and the "other"
option it had, and a range that still holds every answer (min and max may widen, never narrow). Its label,
anchors, "required", added choices, the order and the page breaks may change: a participant's answers keep
meaning the same thing. Items nobody answered change freely. Each refusal names the item and how many
answered it; nothing is changed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence


def _range_narrowed(old: Mapping, new: Mapping) -> bool:
    low, high = old.get("min"), old.get("max")
    new_low, new_high = new.get("min"), new.get("max")
    if low is not None and (new_low is not None and new_low > low):
        return True
    if low is None and new_low is not None:
        return True
    if high is not None and (new_high is not None and new_high < high):
        return True
    return high is None and new_high is not None


def answered_change_errors(old: Sequence[Mapping], new: Sequence[Mapping], answered: Counter) -> list[str]:
    """Every change from `old` to `new` that the answers (`answered`: item name -> how many answers hold it)
    forbid; empty when the change is allowed."""
    now = {item.get("name"): item for item in new if isinstance(item, Mapping)}
    errors = []
    for item in old:
        if not isinstance(item, Mapping):
            continue
        name = item.get("name")
        count = answered.get(name, 0)
        if not count:
            continue
        who = f"{count} answer{'s' if count != 1 else ''}"
        changed = now.get(name)
        if changed is None:
            errors.append(
                f"{name}: {who} hold this item; it cannot be removed or renamed (its column would lose "
                "them). Change its question instead."
            )
            continue
        if changed.get("kind", "text") != item.get("kind", "text"):
            errors.append(f"{name}: {who} hold this item; its kind cannot change")
            continue
        dropped = [
            str(c)
            for c in item.get("choices") or []
            if str(c) not in {str(c) for c in changed.get("choices") or []}
        ]
        if dropped:
            errors.append(f"{name}: {who} hold this item; its choices cannot lose {', '.join(dropped)}")
        if item.get("other") is True and changed.get("other") is not True:
            errors.append(f"{name}: {who} hold this item; its 'other (please specify)' cannot be removed")
        if item.get("kind") in ("integer", "number", "scale") and _range_narrowed(item, changed):
            errors.append(f"{name}: {who} hold this item; its range may widen, not narrow")
    return errors
