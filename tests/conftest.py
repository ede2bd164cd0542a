"""Fixtures shared by every test module.

`shared_data` is the folder of real data (Cranfield, trec_eval's regression files, the TREC 2012 Session
Track log) that `.ci/run` names with SESSIONLAB_DATA. On a newcomer's clone it is unset and the tests that
need it skip, saying so; in CI (CI=true) a missing folder fails them instead, so a gap cannot hide.
"""

import os
from pathlib import Path

import pytest


def _shared_data_or_skip() -> Path:
    raw = os.environ.get("SESSIONLAB_DATA", "")
    in_ci = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
    if raw and Path(raw).is_dir():
        return Path(raw)
    message = (
        "needs the shared data folder (Cranfield, trec_eval regression files, TREC Session 2012): "
        "set SESSIONLAB_DATA=../shared/data"
        + (f" (SESSIONLAB_DATA={raw!r} is not a folder)" if raw else "")
    )
    if in_ci:
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return _shared_data_or_skip()
