"""Simulation fixtures: the participant's way's running study and its simulated participants
(tests/participation/conftest.py)."""

from tests.participation.conftest import (  # noqa: F401  (fixtures)
    index_root,
    prebuilt_indexes,
    running_study,
    simulated_study,
    small_collection,
)
