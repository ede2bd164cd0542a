"""What a client event must be before any SQL sees it: pure Python, O(its size) (a pass to clean its text, one
to write its data as compact JSON, whose length is its size: over EVENTS_MAX_EVENT_BYTES it is refused).

A participant's text is kept, not refused: a lone UTF-16 surrogate (half an emoji) becomes U+FFFD and a NUL
is removed, and the event says so (`"normalized": [the data paths changed]`). Anything the columns or the
JSON log cannot hold is refused for that event alone, with a reason naming the field: numbers out of range,
non-finite numbers, data nested too deep, fields of the wrong kind. A client time is never refused: one too
far from the server's receive time, or outside years 1-9999 in UTC, is kept as raw text only
(`client_time_checked`, which the archive importer applies too). docs/security.md lists the rules and tests.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.utils.dateparse import parse_datetime

from studies.errors import EventRefused

CLIENT_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
EVENT_TYPE = re.compile(r"^[a-z][a-z_]{0,39}$")
MAX_SEQUENCE = 2**31 - 1  # Event.sequence: a PositiveIntegerField (integer on PostgreSQL)
# What SQLite can bind and its JSON functions read as an integer; a query position beyond it failed the batch.
# Smaller numbers out of a column's range (a page, a rank, a position) are refused by the ingest's own checks
# before they reach a column.
MAX_JSON_INT = 2**63 - 1
MAX_DEPTH = 16  # levels of objects and lists inside an event's data
MAX_TIME_TEXT = 100  # characters of an unreadable client time kept in the data
# The event types only the server writes (a form's step, a check, a gold answer or pin, a reload): their
# readers trust them (a gold answer passed, a pair pinned), so a client that sends one is refused for that
# event, on every events endpoint (the page's batch and the participant API share this check). `session_end`
# is not among them: the page reports it; the server writes it too, for a time-out, with an id of its own.
SERVER_EVENT_TYPES = frozenset(
    {
        "consent",
        "consent_declined",
        "questionnaire",
        "pre_task",
        "post_task",
        "session_start",
        "check",
        "gold",
        "gold_pair",
        "page_reload",
    }
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def text_clean(value: str) -> tuple[str, bool]:
    """`value` with lone surrogates as U+FFFD and NULs removed; and whether it changed. ASCII text costs one
    scan (str.isascii is a flag check in CPython)."""
    if value.isascii():
        return (value.replace("\x00", ""), True) if "\x00" in value else (value, False)
    changed = False
    if _SURROGATE.search(value):
        value, changed = _SURROGATE.sub("\ufffd", value), True
    if "\x00" in value:
        value, changed = value.replace("\x00", ""), True
    return value, changed


def _int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _clean(value, path: str, depth: int, normalized: list[str]):
    """`value` (parsed JSON) with its text cleaned; raises EventRefused for what the log cannot hold."""
    if isinstance(value, str):
        cleaned, changed = text_clean(value)
        if changed:
            normalized.append(path)
        return cleaned
    if value is None or isinstance(value, bool | int | float):
        return _number_checked(value, path)
    if depth >= MAX_DEPTH:
        raise EventRefused(f"data.{path}: nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        return _object_cleaned(value, path, depth, normalized)
    if isinstance(value, list):
        return [_clean(item, f"{path}.{i}", depth + 1, normalized) for i, item in enumerate(value)]
    raise EventRefused(f"data.{path}: not a JSON value")


def _number_checked(value, path: str):
    """A null, a boolean or a number, as it is; EventRefused for a number JSON's readers cannot hold."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and not -MAX_JSON_INT <= value <= MAX_JSON_INT:
        raise EventRefused(f"data.{path}: a number beyond 64 bits")
    if isinstance(value, float) and not math.isfinite(value):
        raise EventRefused(f"data.{path}: not a finite number")
    return value


def _object_cleaned(value: dict, path: str, depth: int, normalized: list[str]) -> dict:
    """A JSON object with its keys and values cleaned (`_clean`), the cleaned keys' paths noted."""
    out = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise EventRefused(f"data.{path}: keys are text")
        key, changed = text_clean(key)
        where = f"{path}.{key}" if path else key
        if changed:
            normalized.append(where)
        out[key] = _clean(item, where, depth + 1, normalized)
    return out


def _time_checked(time):
    """The event's client time as sent (None, ISO 8601 text or a number); EventRefused otherwise."""
    if time is not None and (isinstance(time, bool) or not isinstance(time, str | int | float | datetime)):
        raise EventRefused("time: ISO 8601 text or milliseconds since the epoch")
    if isinstance(time, float) and not math.isfinite(time):
        raise EventRefused("time: not a finite number")
    if isinstance(time, int) and not -MAX_JSON_INT <= time <= MAX_JSON_INT:
        raise EventRefused("time: a number beyond 64 bits")
    return time


def event_check(raw) -> dict:
    """The event, ready for the ingest: {"id", "type", "session" (as sent), "seq" (int or None), "time"
    (as sent), "data" (a dict, text cleaned), "normalized" (the data paths whose text was cleaned),
    "data_text" (the data as compact JSON: its length is the event's size)}. Raises EventRefused with the
    field and the reason."""
    if not isinstance(raw, Mapping):
        raise EventRefused("an event is a JSON object")
    cid, kind = raw.get("id"), raw.get("type")
    if not isinstance(cid, str) or not CLIENT_ID.match(cid):
        raise EventRefused("id: 1..64 letters, digits or _.:-")
    if not isinstance(kind, str) or not EVENT_TYPE.match(kind):
        raise EventRefused("type: lower-case letters and _ (at most 40)")
    if kind in SERVER_EVENT_TYPES:
        raise EventRefused(f"type: {kind!r} is written by the server; a client cannot send it")
    seq = raw.get("seq")
    if seq is not None and (not _int(seq) or not 0 <= seq <= MAX_SEQUENCE):
        raise EventRefused(f"seq: a whole number from 0 to {MAX_SEQUENCE}")
    time = _time_checked(raw.get("time"))
    data = raw.get("data")
    if data is None:
        data = {}
    elif not isinstance(data, dict):
        raise EventRefused("data: a JSON object")
    normalized: list[str] = []
    data = _clean(data, "", 0, normalized)
    # Its size as compact JSON (ASCII, as stored): the one serialisation of the event the ingest makes, for
    # the cap here, the participant's quota and the re-send digest (ingest_batch.sent_digest).
    data_text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    if len(data_text) > settings.EVENTS_MAX_EVENT_BYTES:
        raise EventRefused(
            f"data: {len(data_text)} bytes, over the {settings.EVENTS_MAX_EVENT_BYTES} an event may hold"
            " (EVENTS_MAX_EVENT_BYTES)"
        )
    if isinstance(time, str):
        time = text_clean(time)[0]
    # The session is left as sent: the ingest reads only what is an id of theirs, and refuses the rest as not
    # one of their sessions (stored, like any refusal).
    return {
        "id": cid,
        "type": kind,
        "session": raw.get("session"),
        "seq": seq,
        "time": time,
        "data": data,
        "normalized": normalized,
        "data_text": data_text,
    }


# --- client times ---------------------------------------------------------------------------------------

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


NOT_A_TIME = "not an ISO 8601 date and time nor milliseconds since the epoch"
OUT_OF_RANGE = "outside years 1-9999 in UTC"
TOO_FAR = "further from the server's receive time than CLIENT_TIME_WINDOW_SECONDS"


def client_time_checked(
    value, *, received_at: datetime, window: timedelta
) -> tuple[datetime | None, str | None, str | None]:
    """The one rule for a client's clock (the events endpoints, the forms and the archive importer): an ISO
    8601 text (naive is UTC) or milliseconds since the epoch, within `window` of `received_at` (the server's
    receive time), is a timestamp: (time, None, None). Anything else that was sent is (None, its raw text,
    why: NOT_A_TIME, OUT_OF_RANGE such as `0001-01-01T00:00:00+14:00`, or TOO_FAR): it goes into the event's
    data, never into a timestamp column. (None, None, None) when nothing was sent."""
    if value is None or value == "":
        return None, None, None
    raw = text_clean(str(value)[:MAX_TIME_TEXT])[0]  # a form's field may hold a NUL (%00)
    if isinstance(value, bool) or not isinstance(value, str | int | float | datetime):
        return None, raw, NOT_A_TIME
    try:
        if isinstance(value, datetime):  # from a service's caller (the simulated participants)
            moment = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        elif isinstance(value, str):
            parsed = parse_datetime(value)
            if parsed is None:
                return None, raw, NOT_A_TIME
            moment = parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
        elif not math.isfinite(value):
            return None, raw, NOT_A_TIME
        else:
            moment = _EPOCH + timedelta(milliseconds=value)
    except ValueError:  # parse_datetime: a date that does not exist (February 30)
        return None, raw, NOT_A_TIME
    except OverflowError:
        return None, raw, OUT_OF_RANGE
    if abs(moment - received_at) > window:
        return None, raw, TOO_FAR
    return moment, None, None
