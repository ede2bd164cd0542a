"""Browser test: at 1366x768 the participant's results page is scrolled by known amounts and the
window loses focus for a known time; the ranks logged as seen, their visible times (within 100 ms), when
each last left the screen (within 100 ms) and largest visible fractions, the page's scroll depth and the
active time equal what the page's geometry and this test's own clock say, and the researcher's replay of
the session shows it. Chromium through Playwright; headless Chromium keeps every page focused and visible,
so the focus change is the window's own blur and focus events."""

import time

import pytest

from studies.models import AttentionSpan, Event, PageExposure, ResultExposure, SearchSession
from studies.participation.events.exposure import active_ms, attention_checked

from .csp import csp_listen, csp_violations
from .steps import consent_and_questionnaire, ready
from .test_the_search_page_mends import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

HOLD_SECONDS = 1.2
TOLERANCE_MS = 100


def geometry(page) -> dict:
    return page.evaluate(
        """() => ({
            innerHeight: window.innerHeight,
            scrollY: window.scrollY,
            list: (() => { const b = document.getElementById('results').getBoundingClientRect();
                           return [b.top + window.scrollY, b.height]; })(),
            results: Array.from(document.querySelectorAll('#results .result')).map(li => {
                const b = li.getBoundingClientRect();
                return [parseInt(li.dataset.rank, 10), b.top + window.scrollY, b.height];
            }),
        })"""
    )


def fraction(top: float, height: float, scroll: float, viewport: float) -> float:
    seen = min(top + height, scroll + viewport) - max(top, scroll)
    return max(0.0, seen) / height


def test_the_logged_exposure_and_active_time_match_the_geometry_and_the_clock(chromium, live_server, token):
    page = chromium.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(15_000)
    reports = csp_listen(page)
    consent_and_questionnaire(page, live_server, token)
    page.click(ready("#start-search"))
    page.wait_for_selector(ready("#search-app"))
    # The query written in two moments the test times: the first key, then a second's pause before Enter.
    page.fill("#query", "wing")
    typed = time.monotonic()
    time.sleep(1.0)
    page.press("#query", "Enter")
    pause = time.monotonic() - typed
    wait_until(page, "document.getElementById('results-info').textContent.startsWith('Results 1–')")
    shape = geometry(page)
    results = shape["results"]
    assert len(results) == 10
    most = page.evaluate("document.documentElement.scrollHeight") - shape["innerHeight"]
    assert most > 300, "the results page must scroll for this test"
    # The top, then rank 7 cut by the viewport's bottom edge at 70 % and at 30 % of its height: its largest
    # fraction seen is 0.7, and ranks below it are never on screen.
    _, top7, height7 = results[6]
    viewport = shape["innerHeight"]
    wanted = [0, round(top7 + 0.7 * height7 - viewport), round(top7 + 0.3 * height7 - viewport)]
    assert 0 < wanted[2] < wanted[1] <= most, wanted

    # Each scroll position held for a measured time; the window loses focus during the second. A report
    # first: what was seen between the results' drawing and the first hold is in it (read back below).
    page.evaluate("window.sessionlabReports.exposure()")
    holds, starts, blur = [], [], None
    for step, target in enumerate(wanted):
        page.evaluate(f"window.scrollTo(0, {target})")
        began = time.monotonic()
        starts.append(began)
        scroll = page.evaluate("window.scrollY")
        if step == 1:
            time.sleep(0.3)
            page.evaluate("window.dispatchEvent(new Event('blur'))")
            blur_began = time.monotonic()
            time.sleep(0.5)
            page.evaluate("window.dispatchEvent(new Event('focus'))")
            blur = time.monotonic() - blur_began
            time.sleep(HOLD_SECONDS - 0.8)
        else:
            time.sleep(HOLD_SECONDS)
        if step == len(wanted) - 1:  # the report closes the last hold now (as leaving the page would)
            page.evaluate("window.sessionlabReports.exposure(); window.sessionlabReports.attention()")
            starts.append(time.monotonic())  # the last report: those still on screen were last seen now
        holds.append((scroll, time.monotonic() - began))

    session = SearchSession.objects.get(assignment__participant__access_token=token, assignment__position=1)
    wait_until(page, "window.sessionlabOutbox.pending() === 0", timeout=20)

    # What the geometry and the clock say, rank by rank, after what the first report held.
    reported = Event.objects.filter(type="exposure", session=session).order_by("id")
    before = {item[0]: item[2] for item in reported[0].payload["data"]["items"]}
    expected = {}
    for rank, top, height in results:
        fractions = [fraction(top, height, scroll, viewport) for scroll, _ in holds]
        visible_ms = before.get(rank, 0) + sum(
            ms * 1000 for (scroll, ms), f in zip(holds, fractions, strict=True) if f >= 0.5
        )
        borderline = any(0.45 < f < 0.55 for f in fractions)
        expected[rank] = (max(fractions), visible_ms, borderline)
    logged = {
        e.shown_result.rank: e
        for e in ResultExposure.objects.select_related("shown_result").filter(
            shown_result__query__session=session
        )
    }
    assert set(logged) == {rank for rank, (most_seen, _, _) in expected.items() if most_seen > 0}
    assert 7 in logged and 8 not in logged and abs(logged[7].max_permille - 700) <= 20
    for rank, (most_seen, visible_ms, borderline) in expected.items():
        if rank not in logged or borderline:
            continue
        assert abs(logged[rank].visible_ms - visible_ms) <= TOLERANCE_MS, (
            rank,
            logged[rank].visible_ms,
            visible_ms,
        )
        assert abs(logged[rank].max_permille - most_seen * 1000) <= 20, (
            rank,
            logged[rank].max_permille,
            most_seen,
        )
    # When each result last left the screen: the start of the hold after the last one it was at least half
    # visible in (or the last report); on the page's clock, so each is the test's time plus one offset.
    offsets = []
    for rank, top, height in results:
        seen_in = [h for h, (scroll, _) in enumerate(holds) if fraction(top, height, scroll, viewport) >= 0.5]
        fractions = [fraction(top, height, scroll, viewport) for scroll, _ in holds]
        if rank not in logged or any(0.45 < f < 0.55 for f in fractions):
            continue
        if not seen_in:
            assert logged[rank].last_visible_ms is None, rank
            continue
        offsets.append(logged[rank].last_visible_ms - starts[seen_in[-1] + 1] * 1000)
    assert len(offsets) >= 5 and max(offsets) - min(offsets) <= TOLERANCE_MS, offsets
    list_top, list_height = shape["list"]
    deepest = min(1.0, max((scroll + viewport - list_top) / list_height for scroll, _ in holds))
    assert abs(PageExposure.objects.get(query__session=session).scroll_permille - deepest * 1000) <= 20

    # The blur: one span as long as the test held it; active time is the session's time less it.
    (span,) = AttentionSpan.objects.filter(session=session)
    assert span.kind == "blur" and abs(span.duration_ms - blur * 1000) <= TOLERANCE_MS, (
        span.duration_ms,
        blur,
    )
    spans = attention_checked({"spans": [[span.kind, span.start_ms, span.duration_ms]]})
    assert active_ms(spans, 60_000) == 60_000 - span.duration_ms
    assert reported.count() == 2  # the first report and the last (nothing new between: no periodic one)
    query = session.queries.get()
    assert query.first_key_ms is not None and query.first_key_ms < query.formulation_ms
    assert abs((query.formulation_ms - query.first_key_ms) - pause * 1000) <= TOLERANCE_MS
    assert csp_violations(page, reports) == []
    page.close()
    replay_shows(chromium, live_server, session)


def replay_shows(chromium, live_server, session) -> None:
    """The researcher's replay of that session: its timeline, the results shaded by exposure, the blur."""
    page = chromium.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(15_000)
    reports = csp_listen(page)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "x")
    page.click("button[type=submit]")
    study = session.assignment.participant.study
    page.goto(f"{live_server.url}/studies/{study.slug}/sessions/{session.pk}/replay/")
    page.wait_for_selector("body[data-replay=ready]")
    timeline = page.inner_text("#replay-timeline")
    assert "Query 1: “wing”" in timeline and "Away: the window was not focused for 0.5 s" in timeline
    page.click("#replay-timeline li[data-kind=query] button")
    assert page.locator("#replay-results li").count() == 10
    for exposure in ResultExposure.objects.filter(shown_result__query__session=session).select_related(
        "shown_result"
    ):  # shaded by time on screen: under 1 s, 1-3 s, 3-8 s, longer
        seconds = exposure.visible_ms / 1000
        shade = "seen-" + str(1 if seconds < 1 else 2 if seconds < 3 else 3 if seconds < 8 else 4)
        rank = exposure.shown_result.rank
        assert page.get_attribute(f"#replay-results li[data-rank='{rank}']", "class") == shade, rank
    assert page.get_attribute("#replay-results li[data-rank='8']", "class") == ""  # never on screen
    # Its marks are words, not emoji that a machine without an emoji font shows as empty boxes.
    marks = page.inner_text("#replay-results")
    assert not [c for c in marks if ord(c) >= 0x2190 and c not in "“”"], marks
    page.click("#replay-timeline li[data-kind=away] button")
    assert "not focused" in page.inner_text("#replay-status")
    before = page.input_value("#replay-seek")
    page.click("#replay-play")
    time.sleep(0.5)
    page.click("#replay-play")
    assert int(page.input_value("#replay-seek")) > int(before)
    assert csp_violations(page, reports) == []
    page.close()
