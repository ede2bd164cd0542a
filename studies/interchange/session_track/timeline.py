"""A log's session on one timeline: each time it writes (a time of day, seconds from the session's start, or
NA) placed on a date, so that the import stores datetimes in file order."""

from __future__ import annotations

import datetime as dt

from studies.interchange.session_track.log import LogSession, Stamp


class _Clock:
    """A session's times on one timeline. Times of day are placed on a running date: one more than 12 hours
    earlier than the latest so far is on the next day (a smaller step back is two overlapping clicks, not
    midnight). Seconds from the session's start count from midnight of `day`. NA (not recorded) is placed
    later, at the latest time known before it (`settle`)."""

    def __init__(self, day: dt.date):
        self.day = day
        self.midnight = dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)
        self.last: dt.datetime | None = None

    def at(self, stamp: Stamp | None) -> dt.datetime | None:
        if stamp is None or stamp.notation is None:
            return None
        if stamp.seconds is not None:
            moment = self.midnight + dt.timedelta(seconds=stamp.seconds)
        else:
            assert stamp.clock is not None  # a notation is a time of day or seconds
            moment = dt.datetime.combine(self.day, stamp.clock, tzinfo=dt.UTC)
            if self.last is not None and moment < self.last - dt.timedelta(hours=12):
                self.day += dt.timedelta(days=1)
                moment += dt.timedelta(days=1)
        self.last = moment if self.last is None else max(self.last, moment)
        return moment


def session_timeline(session: LogSession, day: dt.date):
    """(started, [(issued, [(click, opened, closed or None)])], current query's time or None, ended). A
    session without a start time starts at its first time; a start or an open that is NA is placed at the
    time known before it; a close that is NA stays None (the dwell time was not recorded)."""
    clock = _Clock(day)
    started = clock.at(session.start)
    placed = []
    for interaction in session.interactions:
        issued = clock.at(interaction.start)
        placed.append(
            (issued, [(click, clock.at(click.start), clock.at(click.end)) for click in interaction.clicks])
        )
    current = session.current_query[1] if session.current_query is not None else None
    current_at = clock.at(current)
    if started is None:
        known = [t for issued, clicks in placed for t in (issued, *(c[1] for c in clicks)) if t is not None]
        started = known[0] if known else (current_at or clock.midnight)
    latest = started
    inter = []
    for issued, clicks in placed:
        latest = issued = issued or latest
        settled = []
        for click, opened, closed in clicks:
            opened = opened or latest
            latest = max(latest, opened)
            settled.append((click, opened, closed))
        inter.append((issued, settled))
    ended = max([started, *(t for t in (clock.last, current_at) if t is not None)])
    return started, inter, current_at, ended
