"""The settings the test suite runs with (pyproject.toml): the project's own, read as a development machine.

DEBUG is off by default in sessionlab/settings.py; a test run is development (plain HTTP, the development
secret key, WhiteNoise serving from the finders), so it sets DEBUG=1 unless the caller chose otherwise.
pytest-django still runs each test with settings.DEBUG False, as before. It is set in the environment, not
only here, so that the subprocesses the tests start (management commands, a settings check) see what
they always saw; those that need production settings (tests/faults, the deploy checks) set DEBUG=0 and
SECRET_KEY themselves.
"""

import os
from pathlib import Path

os.environ.setdefault("DEBUG", "1")

# Under pytest-xdist (`make test`) each worker process has its own test database, so its collections' primary
# keys repeat the other workers': their index folders (INDEX_ROOT/collection-<pk>) must not be shared either,
# or one worker's deleted collection removes another's index. Set in the environment for the subprocesses too.
if os.environ.get("PYTEST_XDIST_WORKER") and "INDEX_ROOT" not in os.environ:
    os.environ["INDEX_ROOT"] = str(
        Path(__file__).resolve().parents[1] / "indexes" / f"xdist-{os.environ['PYTEST_XDIST_WORKER']}"
    )

from sessionlab.settings import *  # noqa: E402,F403

# A search that misses an index would build it in a background thread, outside the test's transaction: the
# tests call the build (studies.search.index_versions.index_build_here) themselves, or turn this on.
INDEX_BUILD_ON_MISS = False
