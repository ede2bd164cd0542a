"""Replay fixtures: the way's running study and a started session (tests/participation/conftest.py)."""

from tests.participation.conftest import (  # noqa: F401  (fixtures)
    cid,
    index_root,
    participant,
    prebuilt_indexes,
    running_study,
    session,
    small_collection,
)
