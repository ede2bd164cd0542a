"""Speeders and scripted sessions, and a study's minimum-effort rules: flags from a session's stored numbers.

Pure (no Django): the completion check (recruitment/effort.py), the reconciliation page and the tidy CSV all
call `effort_flags`, so they never disagree. The thresholds are the named constants below;
docs/recruitment.md ("Effort rules and flags") explains each.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from sessionlab.plurals import counted

# A task that ended this soon after its start (on the session's corrected timeline) is a speeder's.
SPEEDER_SECONDS = 20.0
# Machine-regular timing: at least REGULAR_MIN_GAPS gaps between a session's events, and the coefficient of
# variation of those gaps (their standard deviation over their mean) below REGULAR_MAX_CV. People pause to
# read; a loop with a fixed sleep (or no sleep at all) does not.
REGULAR_MIN_GAPS = 5
REGULAR_MAX_CV = 0.1
# The corrected timeline says the task took this many seconds more than the server saw its events arrive
# over (and more than twice as long): the client's times claim work the server never saw happen.
UNSEEN_SLACK_SECONDS = 60.0


@dataclass(frozen=True)
class EffortRules:
    """A study's minimum effort per task; 0 asks nothing."""

    min_queries: int = 0
    min_judgments: int = 0
    min_active_seconds: int = 0

    def asks_anything(self) -> bool:
        return bool(self.min_queries or self.min_judgments or self.min_active_seconds)


NO_RULES = EffortRules()
# The presets the settings form offers; each fills the three fields (docs/recruitment.md says why these).
EFFORT_PRESETS = {
    "none": NO_RULES,
    "light": EffortRules(min_queries=1, min_judgments=0, min_active_seconds=30),
    "standard": EffortRules(min_queries=1, min_judgments=1, min_active_seconds=60),
    "strict": EffortRules(min_queries=2, min_judgments=3, min_active_seconds=120),
}


@dataclass(frozen=True)
class SessionEffort:
    """What one task's stored rows say. active_seconds: started..ended on the corrected timeline (None while
    open); event_seconds: the times of the session's events (any origin: only their gaps count);
    server_span_seconds: the first to the last event's arrival at the server (None when unknown)."""

    position: int
    queries: int
    judgments: int
    active_seconds: float | None
    event_seconds: tuple[float, ...] = ()
    server_span_seconds: float | None = None


@dataclass(frozen=True)
class Flag:
    """code: no_queries | speeder | machine_regular | unseen_time | below_rules."""

    code: str
    position: int
    reason: str

    def text(self) -> str:
        return f"task {self.position}: {self.reason}"


FLAG_CODES = ("no_queries", "speeder", "machine_regular", "unseen_time", "below_rules")


def gaps_variation(event_seconds: Sequence[float]) -> tuple[int, float | None]:
    """(number of gaps, coefficient of variation of the gaps between the times, sorted); the variation is 0.0
    when every gap is 0 (events at one instant) and None with fewer than two gaps."""
    times = sorted(event_seconds)
    gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
    if len(gaps) < 2:
        return len(gaps), None
    mean = statistics.fmean(gaps)
    if mean <= 0:
        return len(gaps), 0.0
    return len(gaps), statistics.pstdev(gaps) / mean


def effort_flags(sessions: Sequence[SessionEffort], rules: EffortRules = NO_RULES) -> list[Flag]:
    """Every flag of a participant's tasks, in task order: no queries, a speeder's duration, machine-regular
    timing, time the server never saw, and each shortfall against `rules` (code below_rules)."""
    flags: list[Flag] = []
    for session in sorted(sessions, key=lambda s: s.position):
        position, active = session.position, session.active_seconds
        if session.queries == 0:
            flags.append(Flag("no_queries", position, "no queries"))
        if active is not None and active < SPEEDER_SECONDS:
            flags.append(Flag("speeder", position, f"ended {active:.1f} s after it started"))
        count, variation = gaps_variation(session.event_seconds)
        if count >= REGULAR_MIN_GAPS and variation is not None and variation < REGULAR_MAX_CV:
            flags.append(
                Flag(
                    "machine_regular",
                    position,
                    f"{count} gaps between events vary by {variation:.3f} (< {REGULAR_MAX_CV})",
                )
            )
        span = session.server_span_seconds
        if active is not None and span is not None and active > max(2 * span, span + UNSEEN_SLACK_SECONDS):
            flags.append(
                Flag("unseen_time", position, f"{active:.0f} s claimed, events arrived over {span:.0f} s")
            )
        flags.extend(_shortfalls(session, rules))
    return flags


def _shortfalls(session: SessionEffort, rules: EffortRules) -> list[Flag]:
    short = []
    if session.queries < rules.min_queries:
        short.append(f"{counted(session.queries, 'query')} < {rules.min_queries}")
    if session.judgments < rules.min_judgments:
        short.append(f"{counted(session.judgments, 'judgment')} < {rules.min_judgments}")
    if rules.min_active_seconds and (session.active_seconds or 0.0) < rules.min_active_seconds:
        short.append(f"{session.active_seconds or 0.0:.0f} s active < {rules.min_active_seconds} s")
    return [Flag("below_rules", session.position, "; ".join(short))] if short else []


def below_rules(flags: Sequence[Flag]) -> list[Flag]:
    return [flag for flag in flags if flag.code == "below_rules"]
