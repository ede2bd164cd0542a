"""Behaviour figures of logged search sessions (a TREC Session Track log, or simulated sessions): pure, plain
records in, numbers out. The simulated searchers are calibrated on them (`scoring.lib.searcher_model`,
docs/planning.md "Calibrated searchers").

Definitions:
- queries per session: the session's queries with logged results (the 2012 track's final "current query" has
  none: it is the track's task, not the searcher's behaviour);
- clicks per query: the clicks logged on a query's results, 0 included; `share_no_click` the share of queries
  with none;
- click rank: the rank of each click; deepest click: the largest clicked rank of a query with at least one
  click (how deep the searcher went, as far as a log can show it);
- dwell: seconds from a click to its end (clicks without both times are left out);
- query terms: the words of a query (runs of [a-z0-9], lower case); first query terms: of a session's first;
- reformulation: from a query to the session's next: "same" (same terms), "add" (terms only added), "drop"
  (only removed), "swap" (some kept, some added and some removed), "new" (none kept);
- learned terms: the share of added terms (in "add", "swap" and "new") that a title or snippet shown earlier
  in the session contained.

Each numeric figure is summarised as n, mean, sd (n - 1) and the quantiles 0.25, 0.5, 0.75, 0.9 (numpy's
linear interpolation).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

TERM = re.compile(r"[a-z0-9]+")
QUANTILES = (0.25, 0.5, 0.75, 0.9)
REFORMULATIONS = ("same", "add", "drop", "swap", "new")
NUMERIC = (
    "queries_per_session",
    "clicks_per_query",
    "click_rank",
    "deepest_click",
    "dwell_seconds",
    "query_terms",
    "first_query_terms",
)


@dataclass(frozen=True)
class LoggedQuery:
    text: str
    shown: tuple[str, ...]  # document ids in rank order (rank 1 first)
    clicks: tuple[int, ...] = ()  # the ranks clicked, in the order clicked
    dwells: tuple[float | None, ...] = ()  # seconds of each click (None: not recorded)
    shown_text: str = ""  # the titles and snippets shown, for "learned terms"


@dataclass(frozen=True)
class LoggedSession:
    topic: str
    queries: tuple[LoggedQuery, ...]


def terms(text: str) -> list[str]:
    return TERM.findall(text.lower())


def summary(values: Sequence[float]) -> dict:
    """n, mean, sd and the QUANTILES of the values (None for each when there are none)."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return {"n": 0, "mean": None, "sd": None, **{_q(q): None for q in QUANTILES}}
    quantiles = np.quantile(data, QUANTILES)
    return {
        "n": int(data.size),
        "mean": float(data.mean()),
        "sd": float(data.std(ddof=1)) if data.size > 1 else None,
        **{_q(q): float(v) for q, v in zip(QUANTILES, quantiles, strict=True)},
    }


def _q(q: float) -> str:
    return f"q{round(q * 100)}"


def reformulation_kind(previous: Sequence[str], current: Sequence[str]) -> str:
    before, after = set(previous), set(current)
    added, removed = after - before, before - after
    if not added and not removed:
        return "same"
    if not before & after:
        return "new"
    if added and removed:
        return "swap"
    return "add" if added else "drop"


def behaviour_statistics(sessions: Sequence[LoggedSession]) -> dict:
    """The figures of the module docstring: {figure: summary} for the numeric ones, and `share_no_click`,
    `reformulation` ({kind: share}, with `n`) and `learned_terms` ({"n": added terms, "share": ...})."""
    figures: dict[str, list[float]] = {name: [] for name in NUMERIC}
    kinds: Counter = Counter()
    added = learned = 0
    for session in sessions:
        if not session.queries:
            continue
        figures["queries_per_session"].append(len(session.queries))
        seen: set[str] = set()
        previous: list[str] | None = None
        for query in session.queries:
            words = terms(query.text)
            figures["query_terms"].append(len(words))
            figures["clicks_per_query"].append(len(query.clicks))
            figures["click_rank"].extend(query.clicks)
            if query.clicks:
                figures["deepest_click"].append(max(query.clicks))
            figures["dwell_seconds"].extend(d for d in query.dwells if d is not None and d >= 0)
            if previous is None:
                figures["first_query_terms"].append(len(words))
            else:
                kinds[reformulation_kind(previous, words)] += 1
                for word in set(words) - set(previous):
                    added += 1
                    learned += word in seen
            seen.update(terms(query.shown_text))
            previous = words
    clicks = figures["clicks_per_query"]
    changes = sum(kinds.values())
    result: dict = {name: summary(values) for name, values in figures.items()}
    result["share_no_click"] = {
        "n": len(clicks),
        "mean": sum(1 for c in clicks if c == 0) / len(clicks) if clicks else None,
    }
    result["reformulation"] = {
        "n": changes,
        **{kind: (kinds[kind] / changes if changes else None) for kind in REFORMULATIONS},
    }
    result["learned_terms"] = {"n": added, "mean": learned / added if added else None}
    return result


@dataclass(frozen=True)
class Tolerance:
    """How close simulated figures must be to the log's: each mean within `mean_relative` of the log's
    (relative), each quantile within `quantile_absolute` (in the figure's own unit: queries, clicks, ranks),
    the share of queries without a click within `share_absolute`."""

    figures: tuple[str, ...] = ("queries_per_session", "clicks_per_query", "click_rank", "deepest_click")
    mean_relative: float = 0.10
    quantile_absolute: float = 1.0
    share_absolute: float = 0.05

    def as_dict(self) -> dict:
        return {
            "figures": list(self.figures),
            "mean_relative": self.mean_relative,
            "quantile_absolute": self.quantile_absolute,
            "share_absolute": self.share_absolute,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> Tolerance:
        return cls(
            figures=tuple(data["figures"]),
            mean_relative=float(data["mean_relative"]),
            quantile_absolute=float(data["quantile_absolute"]),
            share_absolute=float(data["share_absolute"]),
        )


def tolerance_misses(simulated: Mapping, target: Mapping, tolerance: Tolerance) -> list[str]:
    """Each figure of `simulated` outside the tolerance around `target`, in words ([] when all are within)."""
    misses = []
    for name in tolerance.figures:
        got, want = simulated[name], target[name]
        if want["mean"] is None or got["mean"] is None:
            misses.append(f"{name}: no values")
            continue
        if abs(got["mean"] - want["mean"]) > tolerance.mean_relative * abs(want["mean"]):
            misses.append(
                f"{name} mean {got['mean']:.3f}, the log's {want['mean']:.3f} "
                f"(tolerance {tolerance.mean_relative:.0%})"
            )
        for q in QUANTILES:
            key = _q(q)
            if abs(got[key] - want[key]) > tolerance.quantile_absolute:
                misses.append(
                    f"{name} {key} {got[key]:g}, the log's {want[key]:g} "
                    f"(tolerance {tolerance.quantile_absolute:g})"
                )
    got_share, want_share = simulated["share_no_click"]["mean"], target["share_no_click"]["mean"]
    if got_share is None or want_share is None or abs(got_share - want_share) > tolerance.share_absolute:
        misses.append(
            f"share_no_click {got_share}, the log's {want_share} (tolerance {tolerance.share_absolute:g})"
        )
    return misses
