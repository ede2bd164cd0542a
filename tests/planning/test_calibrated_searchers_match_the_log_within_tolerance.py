"""The committed calibration (studies/simulation/searcher_calibration.json) holds: the log's figures are
the TREC 2012 Session Track log's as it is, and the searchers with the committed parameters, replayed on the
log's result lists with the committed seed, give the committed figures, within the stated tolerance of the
log's."""

import pytest

from scoring.lib.searcher_model import ReplayCorpus, replay_statistics
from scoring.lib.session_log_stats import behaviour_statistics, tolerance_misses
from scoring.lib.trec_io.qrels import read_qrels
from studies.interchange.session_track.behaviour import (
    LOG_IN_SHARED_DATA,
    QRELS_IN_SHARED_DATA,
    logged_sessions,
)
from studies.interchange.session_track.reader import read_log_file
from studies.simulation.calibration import calibration_sentence, searcher_calibration


def test_the_committed_figures_are_within_the_tolerance_of_the_log_s():
    calibration = searcher_calibration()
    assert tolerance_misses(calibration.simulated, calibration.log, calibration.tolerance) == []
    assert calibration.tolerance.mean_relative == 0.10 and calibration.tolerance.quantile_absolute == 1.0
    sentence = calibration_sentence()
    assert sentence.startswith("Simulated searchers calibrated on TREC 2012 Session Track: queries/session ")
    assert f"(log {calibration.log['queries_per_session']['mean']:.2f};" in sentence


def test_the_seeded_replay_on_the_log_gives_the_committed_figures(shared_data):
    calibration = searcher_calibration()
    log = logged_sessions(read_log_file(shared_data / LOG_IN_SHARED_DATA))
    measured = behaviour_statistics(log)
    for name, figures in calibration.log.items():  # the committed target is the log as it is
        assert measured[name] == pytest.approx(figures), name
    corpus = ReplayCorpus.from_log(log, read_qrels(shared_data / QRELS_IN_SHARED_DATA))
    simulated = replay_statistics(
        calibration.parameters, corpus, seed=calibration.seed, sessions=calibration.sessions
    )
    assert tolerance_misses(simulated, measured, calibration.tolerance) == []
    for name in calibration.tolerance.figures:
        assert simulated[name] == pytest.approx(calibration.simulated[name]), name


def test_searchers_far_from_the_log_are_outside_the_tolerance(shared_data):
    """The check can fail: impatient searchers who read one snippet are not the log's."""
    from dataclasses import replace

    calibration = searcher_calibration()
    log = logged_sessions(read_log_file(shared_data / LOG_IN_SHARED_DATA))
    corpus = ReplayCorpus.from_log(log, read_qrels(shared_data / QRELS_IN_SHARED_DATA))
    impatient = replace(calibration.parameters, patience_mean=0.5, scan_mean=1.0)
    simulated = replay_statistics(impatient, corpus, seed=calibration.seed, sessions=1000)
    misses = tolerance_misses(simulated, calibration.log, calibration.tolerance)
    assert any(m.startswith("queries_per_session mean") for m in misses)
    assert any(m.startswith("deepest_click mean") for m in misses)
