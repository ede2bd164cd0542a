"""The dashboards' constructed study (tests/dashboards/conftest.py), scored by a default run."""

from tests.dashboards.conftest import (  # noqa: F401  (fixtures, re-exported for pytest)
    _fresh_chart_cache,
    collection_docs,
    constructed,
    scored,
)
