"""`scan = observed` cuts each query where the participant stopped: the deeper of the scan mark and the
deepest document opened from its list. The session is built through the participant's own services (the same
ingest as the browser's batches), scored through the app, and compared with the scoring library."""

import numpy as np
import pytest

from scoring.lib.session import SessionParams, encode_sessions, score_sessions
from scoring.models import QueryScore, ScoringRun, SessionScore
from scoring.services import scoring_run_create
from studies.models import Event, ReferenceJudgment, ReferenceVersion, ShownResult
from studies.participation.way.steps import document_view_log, query_log, scan_mark_record, session_end

from .conftest import cid

pytestmark = pytest.mark.django_db


def _grades(study):
    """Every document judged, grade = its number modulo 4, so any change of depth changes the score."""
    version = ReferenceVersion.objects.create(study=study, number=1)
    documents = list(study.collection.documents.all())
    ReferenceJudgment.objects.bulk_create(
        ReferenceJudgment(version=version, topic_id=str(n), document=d, grade=int(d.external_id) % 4)
        for n in range(1, 5)
        for d in documents
    )
    return {str(n): {d.external_id: int(d.external_id) % 4 for d in documents} for n in range(1, 5)}


def _observed_run(study, alice, capture):
    with capture(execute=True):
        run = scoring_run_create(study=study, created_by=alice, scan="observed", make_default=False)
    run.refresh_from_db()
    assert run.status == ScoringRun.Status.DONE, run.error
    return run


def test_observed_depths_come_from_opened_documents_and_scan_marks(
    running_study, session, alice, django_capture_on_commit_callbacks
):
    qrels = _grades(running_study)
    participant = session.assignment.participant
    shown = []
    for text in ("wing", "flow", "heat"):
        ack = query_log(participant=participant, session=session, text=text, client_event_id=cid())
        assert len(ack["results"]) >= 6, ack
        shown.append([result["doc"] for result in ack["results"]])

    def open_at(position, rank):
        document_view_log(
            participant=participant,
            session=session,
            action="open",
            doc=shown[position - 1][rank - 1],
            query_position=position,
            rank=rank,
            client_event_id=cid(),
        )

    open_at(1, 2)
    open_at(1, 3)  # query 1: opened to rank 3, no mark
    scan_mark_record(
        participant=participant, session=session, query_position=2, rank=2, client_event_id=cid()
    )  # query 2: marked at 2, nothing opened
    open_at(3, 5)
    scan_mark_record(
        participant=participant, session=session, query_position=3, rank=4, client_event_id=cid()
    )  # query 3: opened at 5, marked at 4: 5
    session_end(participant=participant, session=session, reason="satisfied", client_event_id=cid())
    # The events keep what the client sent under "data", the answer under "ack".
    opens = Event.objects.filter(session=session, type="document_open")
    assert [e.payload["data"]["rank"] for e in opens.order_by("id")] == [2, 3, 5]

    run = _observed_run(running_study, alice, django_capture_on_commit_callbacks)
    stored = SessionScore.objects.get(run=run, session=session)
    depths = [3, 2, 5]
    assert stored.length == sum(depths)  # each query's segment is its observed depth

    lists = [
        list(
            ShownResult.objects.filter(query__session=session, query__position=p)
            .order_by("rank")
            .values_list("document__external_id", flat=True)
        )
        for p in (1, 2, 3)
    ]
    topic = session.assignment.scenario.topic_id
    batch = encode_sessions([topic], [lists], qrels, depth=100, scanned_to=[depths])
    expected = score_sessions(batch, SessionParams(scan="observed"))
    assert stored.final == pytest.approx(float(expected.final[0]), abs=1e-12)
    assert stored.normalized_final == pytest.approx(float(expected.normalized_final[0]), abs=1e-12)
    np.testing.assert_allclose(stored.curve_array(), expected.curve[0, : stored.length], atol=1e-12)
    per_query = (
        QueryScore.objects.filter(run=run, session=session)
        .order_by("position")
        .values_list("sdcg", flat=True)
    )
    np.testing.assert_allclose(list(per_query), expected.per_query_of(0), atol=1e-12)


def test_a_forged_rank_in_an_open_event_does_not_set_the_depth(
    running_study, session, alice, django_capture_on_commit_callbacks
):
    """The depth is the rank the document was shown at, whatever rank the client reported."""
    _grades(running_study)
    participant = session.assignment.participant
    ack = query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    document_view_log(
        participant=participant,
        session=session,
        action="open",
        doc=ack["results"][1]["doc"],
        query_position=1,
        rank=10**9,
        client_event_id=cid(),
    )
    session_end(participant=participant, session=session, reason="satisfied", client_event_id=cid())
    run = _observed_run(running_study, alice, django_capture_on_commit_callbacks)
    assert SessionScore.objects.get(run=run, session=session).length == 2
