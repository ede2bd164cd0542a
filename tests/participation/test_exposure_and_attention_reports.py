"""The exposure and attention reports (studies/participation/events/exposure.py): every item checked
and refused with its place, aggregates that fold report after report, active time as the duration less each
inactive moment once, and the scan depth measured from exposure."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from studies.participation.events.exposure import (
    MAX_ITEMS,
    AwaySpan,
    ExposureError,
    RankExposure,
    active_ms,
    attention_checked,
    exposure_checked,
    inactive_ms,
    merged,
    observed_scan_depth,
)


def test_a_report_is_read_item_by_item():
    report = exposure_checked(
        {
            "query": 2,
            "page": 1,
            "items": [[1, 0, 1500, 1000, 300, 1, 1500], [2, 120, 900, 640]],
            "scroll_permille": 420,
        }
    )
    assert (report.query, report.page, report.scroll_permille) == (2, 1, 420)
    assert report.items == (
        RankExposure(1, 0, 1500, 1000, 300, 1, 1500),
        RankExposure(2, 120, 900, 640, 0, 0, 0),
    )


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"page": 1, "items": [[1, 0, 1, 1]]}, "query must be a whole number"),
        ({"query": 1, "items": []}, "items must be a non-empty list"),
        ({"query": 1, "items": "1,0,1,1"}, "items must be a non-empty list"),
        ({"query": 1, "items": [[1, 0, 1, 1], [2, 0, 1]]}, "items[1] must be a list of 4 to 7"),
        ({"query": 1, "items": [[1, 0, 1, 1, 0, 0, 5, 9]]}, "items[0] must be a list of 4 to 7"),
        ({"query": 1, "items": [[1, 0, 1, 1, 0, 0, -1]]}, "items[0].until_ms must be a whole number"),
        ({"query": 1, "items": [[0, 0, 1, 1]]}, "items[0].rank must be a whole number from 1 to 1000"),
        ({"query": 1, "items": [[1, -5, 1, 1]]}, "items[0].start_ms must be"),
        ({"query": 1, "items": [[1, 0, 1.5, 1]]}, "items[0].visible_ms must be"),
        (
            {"query": 1, "items": [[1, 0, 1, 1001]]},
            "items[0].max_permille must be a whole number from 0 to 1000",
        ),
        ({"query": 1, "items": [[1, 0, 1, True]]}, "items[0].max_permille must be"),
        ({"query": 1, "items": [[1, 0, 1, 1, -1]]}, "items[0].hover_ms must be"),
        ({"query": 1, "items": [[1, 0, 1, 1], [1, 5, 1, 1]]}, "items[1].rank 1 is reported twice"),
        ({"query": 1, "items": [[1, 0, 1, 1]], "scroll_permille": 1200}, "scroll_permille must be"),
        ({"query": 1, "items": [[n, 0, 1, 1] for n in range(1, MAX_ITEMS + 2)]}, "at most 200"),
    ],
)
def test_a_bad_report_is_refused_naming_its_item_and_field(data, says):
    with pytest.raises(ExposureError) as refused:
        exposure_checked(data)
    assert says in str(refused.value)


@pytest.mark.parametrize(
    ("item", "says"),
    [
        ([1, 0, 100, 1000, 80_001, 1, 100], "items[0].hover_ms 80001 is past the session so far (70000 ms)"),
        (
            [1, 60_000, 100, 1000, 20_001, 1, 60_100],
            "items[0].hover_ms 20001 is longer than from its start_ms",
        ),
        ([1, 60_000, 20_001, 1000, 0, 0, 0], "items[0].visible_ms 20001 is longer than from its start_ms"),
    ],
)
def test_hover_and_visible_time_fit_between_the_item_s_start_and_the_session_so_far(item, says):
    with pytest.raises(ExposureError) as refused:
        exposure_checked({"query": 1, "items": [item]}, session_ms=70_000)
    assert says in str(refused.value)
    # Just within: the slack of 10 s past the session so far; hover is not held to until_ms.
    exposure_checked({"query": 1, "items": [[1, 60_000, 100, 1000, 20_000, 1, 60_100]]}, session_ms=70_000)
    exposure_checked({"query": 1, "items": [[1, 0, 100, 500, 50_000, 1, 100]]}, session_ms=70_000)


def test_attention_spans_are_checked_one_by_one():
    assert attention_checked({"spans": [["hidden", 1000, 2500], ["idle", 0, 30000]]}) == (
        AwaySpan("hidden", 1000, 2500),
        AwaySpan("idle", 0, 30000),
    )
    for spans, says in (
        ([["away", 0, 1]], "spans[0].kind must be one of hidden, blur, idle"),
        ([["blur", 0, 1], ["blur", 0]], "spans[1] must be [kind, start_ms, duration_ms]"),
        ([["blur", 0, -1]], "spans[0].duration_ms must be"),
        ([], "spans must be a non-empty list"),
    ):
        with pytest.raises(ExposureError, match=None) as refused:
            attention_checked({"spans": spans})
        assert says in str(refused.value)


def test_reports_fold_into_one_aggregate_per_rank():
    first = RankExposure(3, 500, 1200, 400, 100, 1)
    later = RankExposure(3, 200, 800, 900, 0, 0)
    assert merged(None, first) == first
    assert merged(first, later) == RankExposure(3, 200, 2000, 900, 100, 1)
    # The sums stop at the session so far (and its slack), as the stored upsert's do.
    assert merged(first, RankExposure(3, 0, 900, 0, 900), cap_ms=1500) == RankExposure(
        3, 0, 1500, 400, 1000, 1
    )


def test_the_scan_depth_is_the_deepest_rank_seen_long_enough():
    seen = [RankExposure(1, 0, 4000, 1000), RankExposure(2, 0, 2500, 1000), RankExposure(6, 900, 120, 300)]
    assert observed_scan_depth(seen, 1000) == 2
    assert observed_scan_depth(seen, 100) == 6
    assert observed_scan_depth(seen, 0) == 6
    assert observed_scan_depth([], 500) == 0


def test_active_time_counts_each_inactive_moment_once():
    # 60 s: hidden 10-20 s, blurred 15-25 s (overlapping), idle 50-70 s (past the end).
    spans = [
        AwaySpan("hidden", 10_000, 10_000),
        AwaySpan("blur", 15_000, 10_000),
        AwaySpan("idle", 50_000, 20_000),
    ]
    assert inactive_ms(spans, 60_000) == 15_000 + 10_000
    assert active_ms(spans, 60_000) == 35_000
    assert inactive_ms(spans, 60_000, kinds=("hidden",)) == 10_000


span = st.builds(
    AwaySpan,
    st.sampled_from(["hidden", "blur", "idle"]),
    st.integers(0, 100_000),
    st.integers(0, 50_000),
)


@given(st.lists(span, max_size=30), st.integers(0, 120_000))
def test_active_time_is_between_nothing_and_the_duration(spans, duration):
    active = active_ms(spans, duration)
    assert 0 <= active <= duration
    # Each moment once: never more inactive than the spans' sum, nor than the duration.
    assert inactive_ms(spans, duration) <= min(duration, sum(s.duration_ms for s in spans))


@given(st.lists(span, max_size=20), st.lists(span, max_size=20), st.integers(0, 120_000))
def test_more_inactive_spans_never_add_active_time(some, more, duration):
    assert active_ms(some + more, duration) <= active_ms(some, duration)


@given(
    st.lists(
        st.builds(
            RankExposure,
            st.integers(1, 50),
            st.integers(0, 10_000),
            st.integers(0, 10_000),
            st.integers(0, 1000),
        ),
        max_size=30,
    ),
    st.integers(0, 5000),
    st.integers(0, 5000),
)
def test_a_longer_threshold_never_sees_deeper(exposures, low, extra):
    assert observed_scan_depth(exposures, low + extra) <= observed_scan_depth(exposures, low)
