"""The search page's batches carry the client's clock (docs/time-model.md): each says when it left and reports
the last round trip, so the session holds a round-trip estimate of the browser's clock offset and its query
times are the browser's times of the actions, corrected by it."""

import pytest

from studies.models import Event, Query, SearchSession

from .steps import consent_and_questionnaire, ready

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_session_gets_a_round_trip_estimate_and_queries_the_browsers_times(chromium, live_server, token):
    page = chromium.new_page()
    page.set_default_timeout(15_000)
    consent_and_questionnaire(page, live_server, token)
    page.click(ready("#start-search"))
    page.wait_for_selector(ready("#search-app"))
    for text in ("wing", "heat transfer", "wing flow"):
        page.fill("#query", text)
        page.press("#query", "Enter")
        page.wait_for_function("() => document.querySelectorAll('.result').length === 10")
    page.wait_for_function("() => window.sessionlabOutbox.pending() === 0")

    session = SearchSession.objects.get()
    # the first batch gave a one-way sample; the later ones reported their round trips
    assert session.clock_delay_ms is not None and 0 <= session.clock_delay_ms < 5_000
    assert abs(session.clock_offset_ms) < 5_000  # the same machine's clock
    offset = session.clock_offset_ms
    for query in Query.objects.filter(session=session):
        event = Event.objects.get(session=session, type="query", payload__ack__query=query.position)
        shifted = (query.issued_at - event.client_time).total_seconds() * 1000
        assert shifted == pytest.approx(offset, abs=0.001)
