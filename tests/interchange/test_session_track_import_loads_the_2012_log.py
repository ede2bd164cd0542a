"""The real TREC 2012 Session Track log and its qrels load whole; export writes the same log back."""

import pytest

from studies.interchange.session_track import (
    read_log,
    read_log_file,
    session_track_export,
    session_track_import,
)
from studies.models import Event, Query, ReferenceJudgment, SearchSession, ShownResult

pytestmark = [pytest.mark.django_db, pytest.mark.needs_data]


@pytest.fixture
def imported(alice, session_track_2012):
    return session_track_import(
        path=session_track_2012 / "sessiontrack2012.xml",
        qrels_path=session_track_2012 / "qrels2012.txt",
        owner=alice,
        name="TREC 2012",
    )


def comparable(log):
    """The log without the line numbers the reader records."""
    out = []
    for session in log.sessions:
        out.append(
            (
                session.num,
                session.start,
                session.topic,
                session.current_query,
                [
                    (
                        i.num,
                        i.start,
                        i.query,
                        [(r.rank, r.url, r.docid, r.title, r.snippet) for r in i.results],
                        [(c.num, c.start, c.end, c.rank) for c in i.clicks],
                    )
                    for i in session.interactions
                ],
            )
        )
    return out


def test_it_loads_every_session_interaction_result_and_click(imported):
    study = imported.study
    assert (imported.sessions, imported.interactions, imported.results, imported.clicks) == (
        98,
        199,
        2157,
        272,
    )
    assert SearchSession.objects.filter(assignment__participant__study=study).count() == 98
    assert Query.objects.filter(session__assignment__participant__study=study).count() == 199
    assert ShownResult.objects.filter(query__session__assignment__participant__study=study).count() == 2157
    events = Event.objects.filter(participant__study=study)
    assert events.filter(type="document_open").count() == 272
    assert events.filter(type="document_close").count() == 272
    assert events.filter(type="current_query").count() == 98
    assert study.scenarios.count() == 48 and study.systems.count() == 1


def test_the_first_session_is_read_as_written(imported):
    session = SearchSession.objects.get(
        assignment__participant__study=imported.study, assignment__participant__code="ST001"
    )
    assert session.started_at.isoformat() == "2012-01-01T09:54:08.725624+00:00"
    first = session.queries.get(position=1)
    assert first.text == "US tax code 403 (b)"
    top = first.shown_results.select_related("document").get(rank=1)
    assert top.document.external_id == "clueweb09-enwp00-09-05733"
    assert top.document.extra["url"] == "http://en.wikipedia.org/wiki/403(b)"
    assert top.title == "403(b) - Wikipedia, the free encyclopedia"
    click = session.events.filter(type="document_open").order_by("sequence").first()
    assert click.payload["data"] == {
        "doc": "clueweb09-enwp01-56-23264",
        "query": 1,
        "rank": 2,
        "click": 1,
        "times": {"start": "09:54:42.635247", "end": "09:54:43.722679"},
    }
    assert click.client_time.isoformat() == "2012-01-01T09:54:42.635247+00:00"
    current = session.events.get(type="current_query")
    assert current.payload["data"]["text"] == "US tax code 403 (b) eligibility"


def test_its_qrels_are_the_first_reference_version_with_negative_grades_kept(imported):
    study = imported.study
    assert study.grade_values() == [0, 1, 2, 3, 4]
    version = imported.reference_version
    assert version.number == 1
    judgments = ReferenceJudgment.objects.filter(version=version)
    assert judgments.count() == 17861 == imported.reference_judgments
    assert judgments.values("topic_id").distinct().count() == 48
    assert imported.negatives_mapped == 975 and imported.negative_grades == "keep"
    assert judgments.filter(grade=-2).count() == 975  # as judged: the formulations decide what -2 is worth
    assert judgments.filter(grade=0).count() == 12384
    assert judgments.filter(grade=4).count() == 1360


def test_negative_grades_can_be_clipped_dropped_or_refused(alice, session_track_2012):
    log, qrels = session_track_2012 / "sessiontrack2012.xml", session_track_2012 / "qrels2012.txt"
    clipped = session_track_import(
        path=log, qrels_path=qrels, owner=alice, name="clipped", negative_grades="clip"
    )
    grades = ReferenceJudgment.objects.filter(version=clipped.reference_version)
    assert grades.filter(grade__lt=0).count() == 0 and grades.filter(grade=0).count() == 12384 + 975
    dropped = session_track_import(
        path=log, qrels_path=qrels, owner=alice, name="dropped", negative_grades="drop"
    )
    assert dropped.reference_judgments == 17861 - 975
    with pytest.raises(Exception) as refused:
        session_track_import(
            path=log, qrels_path=qrels, owner=alice, name="refused", negative_grades="refuse"
        )
    assert "qrels2012.txt:" in str(refused.value) and "grade: grade -2 is negative" in str(refused.value)
    assert refused.value.field == "grade"


def test_export_then_read_gives_back_every_query_result_and_click(imported, session_track_2012):
    original = read_log_file(session_track_2012 / "sessiontrack2012.xml")
    exported = read_log(session_track_export(study=imported.study), "exported.xml")
    assert exported.root == original.root == "sessiontrack2012"
    assert comparable(exported) == comparable(original)


def test_an_imported_event_was_received_when_the_log_says_it_happened(imported):
    """The log is the only clock of an imported study: an event's server time is its logged time, as the
    sessions' and queries' times are, so an archive of the study passes the client-time window."""
    events = Event.objects.filter(participant__study=imported.study)
    assert events.exclude(client_time=None).count() > 800
    assert not [e.pk for e in events.exclude(client_time=None) if e.server_time != e.client_time]
    assert events.filter(server_time__year=2012).count() == events.count()
