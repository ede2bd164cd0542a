"""The dashboards' "Attention and exposure per system" table, from the exposure and attention the
search page reported: active time, the share away, results seen per query, seconds on screen per result and
the scroll depth, per system, over the sessions that reported any; the others counted apart."""

from types import SimpleNamespace

import numpy as np
import pytest

from scoring.dashboards.charts import attention_table
from scoring.selectors import SessionAttention


def test_the_table_averages_the_sessions_that_reported():
    scores = SimpleNamespace(system=["A", "A", "B"], n_queries=np.array([2, 4, 1]))
    attention = SessionAttention(
        duration_ms=np.array([100_000, 60_000, 50_000]),
        active_ms=np.array([80_000, 60_000, 0]),
        spans=np.array([1, 0, 0]),
        exposed=np.array([10, 8, 0]),  # the third session reported nothing (an external front-end, say)
        seen=np.array([6, 4, 0]),
        visible_ms=np.array([20_000, 24_000, 0]),
        scroll_permille=np.array([500.0, 700.0, np.nan]),
    )
    chart = attention_table(scores, attention, seen_ms=1000)
    a, b = chart.rows
    assert a[:3] == ["A", 2, 2] and b[:3] == ["B", 1, 0]
    assert a[3] == pytest.approx(70.0)  # (80 + 60) / 2 s active
    assert a[4] == pytest.approx(0.1)  # away 20 % and 0 %
    assert a[5] == pytest.approx((6 / 2 + 4 / 4) / 2)
    assert a[6] == pytest.approx((2.0 + 3.0) / 2)
    assert a[7] == pytest.approx(60.0)
    assert all(np.isnan(v) for v in b[3:])
    assert "after 1000 ms on screen" in chart.figure["layout"]["title"]["text"]
