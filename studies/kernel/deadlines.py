"""THE deadline rule, in the kernel below design and participation: participation ends sessions and times
participants out by it (studies/participation/events/rules.py applies it), and the plan's row choice
(studies/design/rows.py) asks whether a started participant still holds their row by it."""

from __future__ import annotations

from datetime import datetime, timedelta

# A client's own timer ends a timed session; the server ends it only once this much later (network, outbox).
TIME_LIMIT_GRACE = timedelta(seconds=30)


def deadline_at(started_at: datetime, time_limit_minutes: int | None) -> datetime | None:
    """THE session deadline: its start plus the study's time limit; None when the study has none. Where a
    session is ended for it, TIME_LIMIT_GRACE is added for the client's own timer."""
    return started_at + timedelta(minutes=time_limit_minutes) if time_limit_minutes else None
