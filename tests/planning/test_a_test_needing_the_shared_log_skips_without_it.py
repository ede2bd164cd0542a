"""Without SESSIONLAB_DATA a test that needs the Session Track log skips and says what to set (in CI it
fails instead), and the calibration command refuses with the same advice; the demo's searchers read only the
committed calibration, so they need no shared data at all."""

import random

import pytest
from django.core.management import CommandError, call_command

from scoring.lib import searcher_model
from studies.simulation import calibration
from studies.simulation import participants as simulation
from tests.conftest import _shared_data_or_skip


@pytest.fixture
def no_shared_data(monkeypatch):
    monkeypatch.delenv("SESSIONLAB_DATA", raising=False)
    monkeypatch.delenv("CI", raising=False)


def test_the_log_s_test_skips_with_a_message_when_sessionlab_data_is_unset(no_shared_data):
    with pytest.raises(pytest.skip.Exception, match="set SESSIONLAB_DATA=../shared/data"):
        _shared_data_or_skip()


def test_in_ci_the_missing_log_is_a_failure_not_a_skip(no_shared_data, monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="TREC Session 2012"):
        _shared_data_or_skip()


def test_the_calibration_command_says_where_the_log_is(no_shared_data, tmp_path):
    output = tmp_path / "calibration.json"
    with pytest.raises(CommandError, match="set SESSIONLAB_DATA or pass --log and --qrels"):
        call_command("calibrate_searchers", "-o", str(output))
    assert not output.exists()


def test_a_bad_log_path_is_named_and_nothing_is_written(no_shared_data, tmp_path):
    output = tmp_path / "calibration.json"
    with pytest.raises(CommandError, match="nowhere.xml"):
        call_command(
            "calibrate_searchers", "--log", str(tmp_path / "nowhere.xml"), "--qrels", "q", "-o", str(output)
        )
    assert not output.exists()


def test_the_demo_s_searchers_read_the_committed_parameters_without_shared_data(no_shared_data):
    calibration.searcher_calibration.cache_clear()
    parameters = calibration.searcher_parameters()
    assert calibration.CALIBRATION_FILE.is_file()  # in the repository, beside the simulation
    assert parameters == searcher_model.calibration_read(calibration.CALIBRATION_FILE).parameters
    drawn = simulation.profile_draw(random.Random(7))
    assert drawn == searcher_model.traits_draw(parameters, random.Random(7))
