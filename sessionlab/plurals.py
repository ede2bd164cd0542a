"""Counts in words: "1 item", "2 items", never "1 items". Templates use Django's `pluralize`
(`{{ n }} item{{ n|pluralize }}`); Python's messages use `counted`."""

from __future__ import annotations

_VOWELS = "aeiou"


def plural_of(noun: str) -> str:
    """The regular English plural of a count noun: query -> queries, box -> boxes, day -> days."""
    if noun.endswith("y") and len(noun) > 1 and noun[-2] not in _VOWELS:
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """ "1 item", "0 items", "2 queries"; `plural` where the regular one is wrong. Thousands are not
    grouped: the number reads as it is stored."""
    return f"{count} {singular if count == 1 else plural or plural_of(singular)}"
