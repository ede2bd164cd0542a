"""A Session Track log as behaviour records (`scoring.lib.session_log_stats`): per session, each query with
its shown documents, clicked ranks, dwell times and shown titles and snippets; and the simulated searchers'
calibration computed from the TREC 2012 log (`manage.py calibrate_searchers`; the committed result is read by
studies/simulation/calibration.py)."""

from __future__ import annotations

import os
from pathlib import Path

from scoring.lib import searcher_model
from scoring.lib.searcher_model import Calibration, ReplayCorpus, SearcherParameters
from scoring.lib.session_log_stats import LoggedQuery, LoggedSession, Tolerance, behaviour_statistics
from scoring.lib.trec_io.qrels import read_qrels
from studies.interchange.session_track.log import DEFAULT_DAY, Log
from studies.interchange.session_track.reader import read_log_file
from studies.interchange.session_track.timeline import session_timeline

LOG_IN_SHARED_DATA = Path("peer-data") / "trec-session-2012" / "sessiontrack2012.xml"
QRELS_IN_SHARED_DATA = Path("peer-data") / "trec-session-2012" / "qrels2012.txt"
SOURCE = (
    "TREC 2012 Session Track (98 sessions; peer-data/trec-session-2012: sessiontrack2012.xml, qrels2012.txt)"
)
SEED = 29
SESSIONS = 4000


def logged_sessions(log: Log) -> list[LoggedSession]:
    """Each session's queries with results (interactions; the final current query has none). A click's dwell
    is its end minus its start on the session's timeline; None when the log did not record the end."""
    sessions = []
    for session in log.sessions:
        _started, placed, _current, _ended = session_timeline(session, DEFAULT_DAY)
        queries = []
        for interaction, (_issued, clicks) in zip(session.interactions, placed, strict=True):
            results = sorted(interaction.results, key=lambda r: r.rank)
            ordered = sorted(clicks, key=lambda c: c[0].num)
            queries.append(
                LoggedQuery(
                    text=interaction.query,
                    shown=tuple(r.docid for r in results),
                    clicks=tuple(click.rank for click, _opened, _closed in ordered),
                    dwells=tuple(
                        (closed - opened).total_seconds() if closed is not None else None
                        for _click, opened, closed in ordered
                    ),
                    shown_text=" ".join(f"{r.title} {r.snippet}" for r in results),
                )
            )
        sessions.append(LoggedSession(topic=session.topic.num, queries=tuple(queries)))
    return sessions


def shared_log_paths(data: str | Path | None = None) -> tuple[Path, Path]:
    """The log and qrels in the shared data folder (SESSIONLAB_DATA unless given)."""
    root = data if data is not None else os.environ.get("SESSIONLAB_DATA", "")
    if not root:
        raise searcher_model.CalibrationError(
            "the TREC 2012 Session Track log is in the shared data folder: set SESSIONLAB_DATA or pass --log "
            "and --qrels"
        )
    return Path(root) / LOG_IN_SHARED_DATA, Path(root) / QRELS_IN_SHARED_DATA


def calibration_compute(
    *,
    log_path: str | Path,
    qrels_path: str | Path,
    seed: int = SEED,
    sessions: int = SESSIONS,
    progress=None,
) -> Calibration:
    """Read the log and its qrels, measure the log, fit the searchers' centres on its result lists and
    measure the fitted searchers (seeded): the calibration to commit."""
    log = logged_sessions(read_log_file(log_path))
    target = behaviour_statistics(log)
    corpus = ReplayCorpus.from_log(log, read_qrels(qrels_path))
    tolerance = Tolerance()
    start = SearcherParameters(**searcher_model.direct_estimates(log, target))
    fitted = searcher_model.fit(
        start, corpus, target, tolerance, seed=seed, sessions=sessions, progress=progress
    )
    figures = searcher_model.replay_statistics(fitted, corpus, seed=seed, sessions=sessions)
    # The replay makes no query text: only the figures of clicks and queries are the simulation's.
    simulated = {k: figures[k] for k in (*tolerance.figures, "share_no_click", "dwell_seconds")}
    return Calibration(fitted, target, simulated, tolerance, seed, sessions, SOURCE)
