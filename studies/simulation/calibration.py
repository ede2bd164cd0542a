"""The simulated searchers' calibration on the TREC 2012 Session Track log: the committed parameters and
figures (searcher_calibration.json, read by the demo's searchers without the shared data), and the study's own
sessions in the calibration's terms. The log is read and the fit made in
studies/interchange/session_track/behaviour.py (`manage.py calibrate_searchers`; docs/planning.md, "Calibrated
searchers")."""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from scoring.lib import searcher_model
from scoring.lib.searcher_model import Calibration, SearcherParameters
from scoring.lib.session_log_stats import LoggedQuery, LoggedSession, behaviour_statistics
from sessionlab.plurals import counted
from studies.models import Event, Query

CALIBRATION_FILE = Path(__file__).resolve().with_name("searcher_calibration.json")

# The figures the page reports (label, key in the statistics), in the order read.
REPORTED = (
    ("queries/session", "queries_per_session"),
    ("clicks/query", "clicks_per_query"),
    ("deepest click", "deepest_click"),
    ("click rank", "click_rank"),
)


@functools.cache
def searcher_calibration() -> Calibration:
    return searcher_model.calibration_read(CALIBRATION_FILE)


def searcher_parameters() -> SearcherParameters:
    return searcher_calibration().parameters


def calibration_sentence(calibration: Calibration | None = None) -> str:
    """ "simulated searchers calibrated on TREC 2012 Session Track: queries/session 2.05 (log 2.03), ..."."""
    calibration = calibration or searcher_calibration()
    parts = []
    for label, key in REPORTED:
        simulated, log = calibration.simulated[key], calibration.log[key]
        parts.append(
            f"{label} {simulated['mean']:.2f} (log {log['mean']:.2f}; median {simulated['q50']:g}, "
            f"log {log['q50']:g})"
        )
    share, log_share = (
        calibration.simulated["share_no_click"]["mean"],
        calibration.log["share_no_click"]["mean"],
    )
    parts.append(f"queries without a click {share:.0%} (log {log_share:.0%})")
    return "Simulated searchers calibrated on TREC 2012 Session Track: " + ", ".join(parts) + "."


def study_logged_sessions(session_ids: Iterable[int]) -> list[LoggedSession]:
    """The sessions as behaviour records, in the log's terms: each query's clicks are its document opens (the
    rank opened, in order), their dwell the closes' dwell_ms. Two queries, whatever the number of sessions."""
    ids = sorted(set(session_ids))
    texts: defaultdict[int, dict[int, str]] = defaultdict(dict)
    for session_id, position, text in Query.objects.filter(session_id__in=ids).values_list(
        "session_id", "position", "text"
    ):
        texts[session_id][position] = text
    opens: defaultdict[tuple[int, int], list[int]] = defaultdict(list)
    closes: defaultdict[tuple[int, int], list[float | None]] = defaultdict(list)
    for session_id, kind, payload in (
        Event.objects.filter(session_id__in=ids, type__in=("document_open", "document_close"))
        .order_by("session_id", "id")
        .values_list("session_id", "type", "payload")
    ):
        data = (payload or {}).get("data") or {}
        if not isinstance(data.get("query"), int) or not isinstance(data.get("rank"), int):
            continue
        key = (session_id, data["query"])
        if kind == "document_open":
            opens[key].append(data["rank"])
        else:
            dwell = data.get("dwell_ms")
            closes[key].append(dwell / 1000 if isinstance(dwell, int | float) else None)
    return [
        LoggedSession(
            topic="",
            queries=tuple(
                LoggedQuery(
                    text=texts[s][p],
                    shown=(),
                    clicks=tuple(opens[(s, p)]),
                    dwells=tuple(closes[(s, p)]),
                )
                for p in sorted(texts[s])
            ),
        )
        for s in ids
        if texts[s]
    ]


def study_behaviour_sentence(session_ids: Iterable[int]) -> str | None:
    """The study's own sessions in the calibration's terms, beside the log's figures (None without any)."""
    sessions = study_logged_sessions(session_ids)
    if not sessions:
        return None
    figures, log = behaviour_statistics(sessions), searcher_calibration().log
    parts = [
        f"{label} {figures[key]['mean']:.2f} (log {log[key]['mean']:.2f})"
        for label, key in REPORTED
        if figures[key]["mean"] is not None
    ]
    share = figures["share_no_click"]["mean"]
    parts.append(f"queries without a click {share:.0%} (log {log['share_no_click']['mean']:.0%})")
    return f"This study's {counted(len(sessions), 'session')}: " + ", ".join(parts) + "."
