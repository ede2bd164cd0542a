"""One session timeline: the client's clock, corrected by its offset from the server's (docs/time-model.md).

Every event keeps the client's time (`Event.client_time`, when it sent a usable one) and the server's receive
time (`Event.server_time`). Each session holds an estimate of the client's clock offset, `clock_offset_ms`
(server time = client time + offset), taken from the round trips its event batches make, NTP-style:

- a batch says when the client sent it (`clock.sent`, t0); the server notes when it received it (t1) and
  answers when it did and when it answered (t2); the client then knows when the answer arrived (t3) and sends
  the four times with its next batch (`clock.previous`). That round trip gives
  offset ((t1 - t0) + (t2 - t3)) / 2 and delay (t3 - t0) - (t2 - t1); the session keeps the round trip of
  least delay (the one whose offset is the least uncertain: it is off by at most delay / 2);
- until a round trip is known, the batch's send time alone is a one-way sample: t1 - t0 is the offset plus the
  one-way delay, so the least such value seen is the best bound (a session start's form gives one too).

Every time derived from a session's events (its start and end, a query's issued_at, a result's shown_at, a
judgment's times) is the event's client time + the session's offset, or the server's receive time where the
client sent no time or one refused (event_checks.client_time_checked). When a better estimate arrives, the
session's derived times all move by the change, so they stay on one timeline: the client's order and durations
are kept whatever the arrival times were (a whole session uploaded an hour late included).

Functions of values here (no database); the event batch (ingest.py) applies them under the session's lock.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.utils.dateparse import parse_datetime

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# A round trip's own figures are refused past these (a wrong clock is corrected, a wrong round trip is not a
# sample): an answer the server took longer than this to write, or a round trip slower than this.
MAX_SERVER_MS = 10 * 60 * 1000
MAX_DELAY_MS = 10 * 60 * 1000


@dataclass(frozen=True)
class Sample:
    """One estimate of a client's clock offset in milliseconds (server = client + offset_ms); delay_ms is the
    round trip's delay, None for a one-way sample (a send time against its receive time)."""

    offset_ms: float
    delay_ms: float | None = None


class ClockRefused(Exception):
    """A batch's clock figures that cannot be a sample; the message names the field."""


def moment_read(value, field: str) -> datetime:
    """An ISO 8601 text (naive is UTC) or milliseconds since the epoch, as an aware UTC datetime."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ClockRefused(f"{field}: ISO 8601 text or milliseconds since the epoch")
    try:
        if isinstance(value, str):
            moment = parse_datetime(value[:100])
            if moment is None:
                raise ClockRefused(f"{field}: not an ISO 8601 date and time")
            return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        if not math.isfinite(value):
            raise ClockRefused(f"{field}: not a finite number")
        return _EPOCH + timedelta(milliseconds=value)
    except (ValueError, OverflowError):
        raise ClockRefused(f"{field}: not a date and time in years 1-9999") from None


def _ms(delta: timedelta) -> float:
    return delta / timedelta(milliseconds=1)


def sample_read(raw, *, received_at: datetime, window: timedelta) -> Sample | None:
    """The best sample a batch's `clock` object gives, or None when it has none (no `clock`, or neither
    `sent` nor `previous`). Raises ClockRefused naming the field for figures that cannot be one: times
    further than `window` from `received_at` (the CLIENT_TIME_WINDOW_SECONDS of client times), a server's
    time in the future, a negative delay."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ClockRefused('clock: an object {"sent": ..., "previous": {...}}')
    samples = []
    if raw.get("sent") is not None:
        sent = moment_read(raw["sent"], "clock.sent")
        if abs(received_at - sent) > window:
            raise ClockRefused("clock.sent: further from the server's time than CLIENT_TIME_WINDOW_SECONDS")
        samples.append(Sample(_ms(received_at - sent)))
    previous = raw.get("previous")
    if previous is not None:
        if not isinstance(previous, Mapping):
            raise ClockRefused("clock.previous: an object {sent, server_received, server_sent, received}")
        t0, t1, t2, t3 = (
            moment_read(previous.get(name), f"clock.previous.{name}")
            for name in ("sent", "server_received", "server_sent", "received")
        )
        for name, moment in (("sent", t0), ("received", t3), ("server_received", t1), ("server_sent", t2)):
            if abs(received_at - moment) > window:
                raise ClockRefused(
                    f"clock.previous.{name}: further from the server's time than CLIENT_TIME_WINDOW_SECONDS"
                )
        if t2 > received_at or t1 > t2 or _ms(t2 - t1) > MAX_SERVER_MS:
            raise ClockRefused(
                "clock.previous: server_received <= server_sent <= now, as the server answered"
            )
        delay = _ms(t3 - t0) - _ms(t2 - t1)
        if t3 < t0 or delay < 0 or delay > MAX_DELAY_MS:
            raise ClockRefused(
                "clock.previous: a round trip takes 0 to 10 minutes (received - sent, less the server's time)"
            )
        samples.append(Sample((_ms(t1 - t0) + _ms(t2 - t3)) / 2, delay))
    return better_of(samples)


def is_better(sample: Sample, offset_ms: float | None, delay_ms: float | None) -> bool:
    """Whether `sample` is a better estimate than the stored one (offset_ms, delay_ms): a round trip beats a
    one-way sample and a longer round trip; a one-way sample beats only none or a larger one-way one."""
    if offset_ms is None:
        return True
    if sample.delay_ms is not None:
        return delay_ms is None or sample.delay_ms < delay_ms
    return delay_ms is None and sample.offset_ms < offset_ms


def better_of(samples) -> Sample | None:
    best = None
    for sample in samples:
        if best is None or is_better(sample, best.offset_ms, best.delay_ms):
            best = sample
    return best


def offset_delta(offset_ms: float | None) -> timedelta:
    """The offset as a timedelta (to the microsecond); none known is zero: the client's clock as it is."""
    return timedelta(0) if offset_ms is None else timedelta(milliseconds=offset_ms)


def on_timeline(
    client_time: datetime | None, server_time: datetime | None, offset_ms: float | None
) -> datetime | None:
    """An event's time on its session's timeline: its client time + the offset; the server's receive time
    where the client's is missing or was refused."""
    if client_time is None:
        return server_time
    return client_time + offset_delta(offset_ms)


def batch_sample(raw, *, received_at: datetime) -> tuple[Sample | None, str | None]:
    """A batch's `clock` as the endpoints read it: (its sample or None, why it was refused or None). A clock
    that cannot be a sample never refuses the events: they are stored, and the answer's clock says why."""
    try:
        return sample_read(
            raw, received_at=received_at, window=timedelta(seconds=settings.CLIENT_TIME_WINDOW_SECONDS)
        ), None
    except ClockRefused as refusal:
        return None, str(refusal)


def answer(received_at: datetime, answered_at: datetime, refused: str | None = None) -> dict:
    """The `clock` of a batch's answer: the server's receive and answer times (the client's next batch
    reports them back with its own, as `clock.previous`)."""
    out = {"server_received": received_at.isoformat(), "server_sent": answered_at.isoformat()}
    if refused:
        out["refused"] = refused
    return out
