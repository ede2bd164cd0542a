"""What a participant saw and attended to, as pure functions over the compact wire format: the
checks of an `exposure` and an `attention` event's data, the per-rank and per-session aggregates built from
them, and the observed scan depth. No Django: the event handlers store what these return, and analysis
(scoring's scan settings, the exports) reads the aggregates, never replaying raw events.

Wire format (docs/api.md, "Exposure and attention"), integers only, times in milliseconds:

- `exposure`, one per results page and flush: `{"query": position, "page": n, "items": [[rank, start_ms,
  visible_ms, max_permille, hover_ms, hovers, until_ms], ...], "scroll_permille": depth}` where `start_ms` is
  when the result first entered the viewport in this report, counted from the page's showing, `visible_ms`
  how long it was at least half visible, `max_permille` the largest visible fraction x 1000, `hover_ms` and
  `hovers` the pointer's dwell and entries, `until_ms` the last moment of the report it was at least half
  visible (when it left the viewport, or the report's time if it is still there), counted from the page's
  showing. The last three may be left out (0; `until_ms` 0: not at least half visible in this report).
  Each item is checked against itself and the session so far, SLACK_MS allowed past each bound: `until_ms`
  not before `start_ms`, `visible_ms` within them, `visible_ms` and `hover_ms` within the session so far
  after `start_ms`; the stored sums of many reports stay within the session so far too.
- `attention`, one per flush: `{"spans": [[kind, start_ms, duration_ms], ...]}`, `kind` one of `hidden` (the
  tab hidden), `blur` (the window lost focus) or `idle` (no input for the page's idle threshold), `start_ms`
  counted from the session's start on the server's clock, each span ending within the session so far.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

MAX_ITEMS = 200  # ranks in one exposure report (a page shows 10; a long external list more)
MAX_RANK = 1000  # as event_handlers.MAX_RESULTS
MAX_MS = 7 * 24 * 3600 * 1000  # a week: longer than any study's session
MAX_HOVERS = 100_000
MAX_SPANS = 500  # attention spans in one report
ATTENTION_KINDS = ("hidden", "blur", "idle")
# What a report may claim past what its own numbers and its session allow, for timers' rounding and the
# client's clock (42 days of visible time were stored for a 2.7-minute session).
SLACK_MS = 10_000
ITEM_FIELDS = ("rank", "start_ms", "visible_ms", "max_permille", "hover_ms", "hovers", "until_ms")


class ExposureError(ValueError):
    """A report that cannot be stored, saying which item and field (the event is refused with it)."""


@dataclass(frozen=True)
class RankExposure:
    rank: int
    start_ms: int
    visible_ms: int
    max_permille: int
    hover_ms: int = 0
    hovers: int = 0
    until_ms: int = 0  # 0: not at least half visible in this report


@dataclass(frozen=True)
class ExposureReport:
    query: int
    page: int
    items: tuple[RankExposure, ...]
    scroll_permille: int | None


@dataclass(frozen=True)
class AwaySpan:
    kind: str
    start_ms: int
    duration_ms: int

    @property
    def end_ms(self) -> int:
        return self.start_ms + self.duration_ms


def _int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _bounded(value, where: str, low: int, high: int) -> int:
    if not _int(value) or not low <= value <= high:
        raise ExposureError(f"{where} must be a whole number from {low} to {high}, not {value!r}")
    return value


def exposure_checked(data: Mapping, *, session_ms: int | None = None) -> ExposureReport:
    """The report in `data`, every item checked; ExposureError naming the first bad one. A rank reported
    twice is refused (the client sums its own observations before sending). An item's times must hold
    together (until_ms, when given, not before start_ms, and visible_ms within them) and, given
    `session_ms` (how long the session has lasted when the report is sent), within the session."""
    query = _bounded(data.get("query"), "query", 1, 32767)
    page = _bounded(data.get("page", 1), "page", 1, 32767)
    scroll = data.get("scroll_permille")
    scroll = None if scroll is None else _bounded(scroll, "scroll_permille", 0, 1000)
    items = data.get("items")
    if not isinstance(items, list) or not items:
        raise ExposureError(
            "items must be a non-empty list of [rank, start_ms, visible_ms, max_permille, ...]"
        )
    if len(items) > MAX_ITEMS:
        raise ExposureError(f"items holds {len(items)} ranks; at most {MAX_ITEMS} in one report")
    checked, seen = [], set()
    for index, item in enumerate(items):
        if not isinstance(item, list) or not 4 <= len(item) <= len(ITEM_FIELDS):
            raise ExposureError(f"items[{index}] must be a list of 4 to 7 numbers ({', '.join(ITEM_FIELDS)})")
        limits = (
            (1, MAX_RANK),
            (0, MAX_MS),
            (0, MAX_MS),
            (0, 1000),
            (0, MAX_MS),
            (0, MAX_HOVERS),
            (0, MAX_MS),
        )
        values = [
            _bounded(value, f"items[{index}].{name}", low, high)
            for value, name, (low, high) in zip(item, ITEM_FIELDS, limits, strict=False)
        ]
        if values[0] in seen:
            raise ExposureError(f"items[{index}].rank {values[0]} is reported twice")
        seen.add(values[0])
        item_checked = RankExposure(*values)
        _times_checked(item_checked, f"items[{index}]", session_ms)
        checked.append(item_checked)
    return ExposureReport(query, page, tuple(checked), scroll)


def _times_checked(item: RankExposure, where: str, session_ms: int | None) -> None:
    if item.until_ms:
        if item.until_ms < item.start_ms:
            raise ExposureError(f"{where}.until_ms {item.until_ms} is before its start_ms {item.start_ms}")
        if item.visible_ms > item.until_ms - item.start_ms + SLACK_MS:
            raise ExposureError(
                f"{where}.visible_ms {item.visible_ms} is longer than from its start_ms to its until_ms "
                f"({item.until_ms - item.start_ms})"
            )
    if session_ms is None:
        return
    for name in ("visible_ms", "hover_ms", "until_ms", "start_ms"):
        if getattr(item, name) > session_ms + SLACK_MS:
            value = getattr(item, name)
            raise ExposureError(f"{where}.{name} {value} is past the session so far ({session_ms} ms)")
    # Both are counted after the result first entered the viewport and before the report left, which is
    # within the session so far (the page is shown after the session's start). Hover is not held to until_ms:
    # the pointer may rest on a result less than half visible, which visible time does not count.
    for name in ("visible_ms", "hover_ms"):
        value = getattr(item, name)
        if item.start_ms + value > session_ms + SLACK_MS:
            raise ExposureError(
                f"{where}.{name} {value} is longer than from its start_ms {item.start_ms} to the end of the "
                f"session so far ({session_ms} ms)"
            )


def attention_checked(data: Mapping, *, session_ms: int | None = None) -> tuple[AwaySpan, ...]:
    """The spans in `data`, each checked; given `session_ms` (how long the session has lasted when the
    report is sent), each must end within it."""
    spans = data.get("spans")
    if not isinstance(spans, list) or not spans:
        raise ExposureError("spans must be a non-empty list of [kind, start_ms, duration_ms]")
    if len(spans) > MAX_SPANS:
        raise ExposureError(f"spans holds {len(spans)} spans; at most {MAX_SPANS} in one report")
    checked = []
    for index, span in enumerate(spans):
        if not isinstance(span, list) or len(span) != 3:
            raise ExposureError(f"spans[{index}] must be [kind, start_ms, duration_ms]")
        kind, start, duration = span
        if kind not in ATTENTION_KINDS:
            raise ExposureError(
                f"spans[{index}].kind must be one of {', '.join(ATTENTION_KINDS)}, not {kind!r}"
            )
        start = _bounded(start, f"spans[{index}].start_ms", 0, MAX_MS)
        duration = _bounded(duration, f"spans[{index}].duration_ms", 0, MAX_MS)
        if session_ms is not None and start + duration > session_ms + SLACK_MS:
            raise ExposureError(
                f"spans[{index}] ends at {start + duration} ms, after the session so far ({session_ms} ms)"
            )
        checked.append(AwaySpan(kind, start, duration))
    return tuple(checked)


def formulation_checked(value) -> tuple[int | None, int | None]:
    """A query event's `formulation` ({"first_key_ms"?, "submit_ms"}: from the task or results page shown to
    the first keystroke and to the submission): (first key, submission), or ExposureError saying what is
    wrong. None: not reported."""
    if value is None:
        return None, None
    if not isinstance(value, Mapping):
        raise ExposureError("formulation must be an object {first_key_ms, submit_ms}")
    submit = _bounded(value.get("submit_ms"), "formulation.submit_ms", 0, 2**31 - 1)
    first = value.get("first_key_ms")
    if first is not None:
        first = _bounded(first, "formulation.first_key_ms", 0, submit)
    return first, submit


def merged(first: RankExposure | None, later: RankExposure, *, cap_ms: int = MAX_MS) -> RankExposure:
    """One rank's aggregate after another report of it: times and hovers add, the visible and hover sums
    up to `cap_ms` (the session so far and SLACK_MS, when the later report came), the start is the
    earliest, the largest fraction the largest (the stored aggregate is this fold over the rank's reports:
    statements.exposures_add)."""
    if first is None:
        return later
    return RankExposure(
        first.rank,
        min(first.start_ms, later.start_ms),
        min(MAX_MS, cap_ms, first.visible_ms + later.visible_ms),
        max(first.max_permille, later.max_permille),
        min(MAX_MS, cap_ms, first.hover_ms + later.hover_ms),
        min(MAX_HOVERS, first.hovers + later.hovers),
    )


def observed_scan_depth(exposures: Iterable[RankExposure], min_visible_ms: int) -> int:
    """The deepest rank visible for at least `min_visible_ms` (0 when none was): the scan depth measured
    from exposure, beside the participant's scan mark and the deepest opened rank."""
    if min_visible_ms < 0:
        raise ValueError("min_visible_ms must be >= 0")
    return max((e.rank for e in exposures if e.visible_ms >= min_visible_ms and e.visible_ms > 0), default=0)


def inactive_ms(spans: Sequence[AwaySpan], duration_ms: int, kinds: Iterable[str] = ATTENTION_KINDS) -> int:
    """The time within [0, duration_ms] covered by spans of these kinds, each moment counted once (a hidden
    tab is also a blurred window; an idle period may overlap either)."""
    wanted = set(kinds)
    intervals = sorted(
        (max(0, s.start_ms), min(duration_ms, s.end_ms))
        for s in spans
        if s.kind in wanted and s.start_ms < duration_ms and s.end_ms > 0
    )
    total, end = 0, 0
    for start, stop in intervals:
        start = max(start, end)
        if stop > start:
            total += stop - start
            end = stop
    return total


def active_ms(spans: Sequence[AwaySpan], duration_ms: int) -> int:
    """A session's active time: its duration less every moment hidden, blurred or idle."""
    if duration_ms < 0:
        raise ValueError("duration_ms must be >= 0")
    return duration_ms - inactive_ms(spans, duration_ms)
