"""The demo's simulated participants report attention and query-writing times that fit their sessions (issue
38: a 0:51 session replayed "Idle: no input for 71.5 s" and an "Away" after its end, a query at 0:07 was
"written in 9.9 s"): the simulation measured the session on the server's timeline against its own clock,
minutes ahead, and drew writing times apart from the seconds the query took."""

import pytest

from studies.models import AttentionSpan, SearchSession
from studies.simulation.participants import participants_simulate

from .conftest import reference_of

pytestmark = pytest.mark.django_db


def test_spans_end_inside_their_session_and_queries_are_written_after_its_start(searchable_study):
    from studies.design import services

    people = services.participants_enrol(study=searchable_study, count=8)
    assert participants_simulate(participants=people, reference=reference_of(searchable_study), seed=5)
    sessions = SearchSession.objects.filter(assignment__participant__study=searchable_study)
    spans = AttentionSpan.objects.filter(session__in=sessions)
    assert spans.exists()
    for span in spans.select_related("session"):
        length_ms = (span.session.ended_at - span.session.started_at).total_seconds() * 1000
        assert span.start_ms + span.duration_ms <= length_ms, (span.kind, span.start_ms, length_ms)
    for session in sessions:
        for query in session.queries.all():
            since_start_ms = (query.issued_at - session.started_at).total_seconds() * 1000
            if query.formulation_ms is not None:
                assert query.formulation_ms <= since_start_ms + 1, (query.formulation_ms, since_start_ms)
