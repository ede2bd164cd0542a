"""Files another app adds to a study's tables zip (studies/interchange/downloads.py), registered with
`register` from that app's ready() (scoring/apps.py: the pre-registration and its deviations), so that
studies, which never imports scoring, still ships what scoring knows of the study."""

from __future__ import annotations

from collections.abc import Callable

# file name in the zip -> build(study): its text, or None when the study has nothing to say in it.
MEMBERS: dict[str, Callable[[object], str | None]] = {}


def register(name: str, build: Callable[[object], str | None]) -> None:
    MEMBERS[name] = build


def members_for(study) -> list[tuple[str, str]]:
    """(name, text) of every registered file the study has, in registration order."""
    out = []
    for name, build in MEMBERS.items():
        text = build(study)
        if text is not None:
            out.append((name, text))
    return out
