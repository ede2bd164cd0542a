"""The researcher's replay of a session, from its structured log: the task, each query and its
results with their exposure, opens and closes with dwell, judgments, scan marks, exposure reports and the
stretches away, in the participant's order on the session's timeline; only the study's researchers see it;
"exclude this participant" there marks the participant, audited, and the study's rule leaves that mark."""

import json

import pytest
from django.test import Client

from studies.assessment.exclusion import exclusion_apply
from studies.models import AuditAction, AuditEntry, Participant
from studies.participation.events.exposure import AwaySpan, active_ms
from studies.participation.way.steps import (
    attention_record,
    document_view_log,
    exposure_record,
    judgment_record,
    query_log,
    scan_mark_record,
    session_end,
)
from studies.replay.session_replay import session_replay

from .conftest import cid

pytestmark = pytest.mark.django_db


@pytest.fixture
def worked(participant, session):
    """One query, a document opened, judged and closed, a scan mark, an exposure report, a blur, the end."""
    ack = query_log(participant=participant, session=session, text="wing", client_event_id="q1")
    doc = ack["results"][1]["doc"]
    for action, extra in (("open", {}), ("close", {"dwell_ms": 4200})):
        document_view_log(
            participant=participant,
            session=session,
            action=action,
            doc=doc,
            query_position=1,
            rank=2,
            client_event_id=cid(),
            **extra,
        )
    judgment_record(participant=participant, session=session, doc=doc, grade=2, client_event_id=cid())
    scan_mark_record(
        participant=participant, session=session, query_position=1, rank=4, client_event_id=cid()
    )
    exposure_record(
        participant=participant,
        session=session,
        query_position=1,
        page=1,
        items=[[1, 0, 2500, 1000], [2, 200, 6100, 1000, 800, 1]],
        scroll_permille=500,
        client_event_id=cid(),
    )
    attention_record(
        participant=participant, session=session, spans=[["blur", 1000, 2000]], client_event_id=cid()
    )
    session_end(participant=participant, session=session, reason="satisfied", client_event_id=cid())
    session.refresh_from_db()
    return session, doc


def test_the_replay_holds_every_action_in_order(worked):
    session, doc = worked
    replay = session_replay(session=session)
    kinds = [entry["kind"] for entry in replay["timeline"]]
    assert kinds[0] == "start" and "end" in kinds
    for kind in ("query", "open", "close", "judgment", "mark", "exposure", "away"):
        assert kind in kinds, kind
    times = [entry["t"] for entry in replay["timeline"]]
    assert times == sorted(times)
    (query,) = replay["queries"]
    results = query["pages"]["1"]["results"] if "1" in query["pages"] else query["pages"][1]["results"]
    assert results[1]["doc"] == doc and results[1]["exposure"]["visible_ms"] == 6100
    assert results[1]["exposure"]["hovers"] == 1 and results[2]["exposure"] is None
    close = next(e for e in replay["timeline"] if e["kind"] == "close")
    assert close["dwell_ms"] == 4200
    away = next(e for e in replay["timeline"] if e["kind"] == "away")
    assert (away["what"], away["t"], away["duration_ms"]) == ("blur", 1000, 2000)
    duration = replay["session"]["duration_ms"]
    assert replay["session"]["active_ms"] == active_ms([AwaySpan("blur", 1000, 2000)], duration)
    assert replay["task"]["title"] == session.assignment.scenario.title


def test_the_page_is_the_researchers_and_carries_the_replay(worked, alice, django_user_model):
    session, _ = worked
    study = session.assignment.participant.study
    url = f"/studies/{study.slug}/sessions/{session.pk}/replay/"
    stranger = django_user_model.objects.create_user("mallory", password="x", is_staff=True)
    browser = Client()
    browser.force_login(stranger)
    assert browser.get(url).status_code == 404
    browser.force_login(alice)
    page = browser.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="replay-data"' in html and "js/replay.js" in html and "<script>" not in html
    data = json.loads(html.split('id="replay-data" type="application/json">', 1)[1].split("</script>", 1)[0])
    assert data["session"]["id"] == session.pk
    assert browser.get(f"/studies/{study.slug}/sessions/999999/replay/").status_code == 404


def test_a_researcher_s_exclusion_is_audited_and_kept_by_the_rule(worked, alice):
    session, _ = worked
    participant = session.assignment.participant
    study = participant.study
    browser = Client()
    browser.force_login(alice)
    url = f"/studies/{study.slug}/sessions/{session.pk}/exclusion/"
    assert browser.post(url, {"reason": "clicked every result in a second"}).status_code == 302
    participant = Participant.objects.get(pk=participant.pk)
    assert participant.excluded_at and participant.excluded_manually
    assert participant.excluded_reason == "excluded by alice: clicked every result in a second"
    entry = AuditEntry.objects.get(action=AuditAction.EXCLUSION_MARKED, participant_code=participant.code)
    assert entry.detail == {
        "trigger": "researcher",
        "by": "alice",
        "reason": "clicked every result in a second",
    }
    exclusion_apply(study=study)  # the rule is off: it clears its own marks, not the researcher's
    assert Participant.objects.get(pk=participant.pk).excluded_at is not None
    assert browser.post(url, {"action": "include"}).status_code == 302
    participant = Participant.objects.get(pk=participant.pk)
    assert participant.excluded_at is None and not participant.excluded_manually
    assert AuditEntry.objects.filter(
        action=AuditAction.EXCLUSION_CLEARED, participant_code=participant.code
    ).exists()


def test_the_participant_list_and_figure_4_lead_to_the_replay(worked, alice):
    session, _ = worked
    study = session.assignment.participant.study
    browser = Client()
    browser.force_login(alice)
    page = browser.get(f"/studies/{study.slug}/").content.decode()
    assert f'href="/studies/{study.slug}/sessions/{session.pk}/replay/"' in page

    import numpy as np

    from scoring.dashboards.charts.sessions import sessions_chart

    class Scores:
        curves = [np.array([0.0, 1.0, 1.5])]
        participant = ["P001"]
        end_reason = ["satisfied"]
        session_id = np.array([session.pk])
        n_queries = np.array([2])
        length = np.array([3])

        def __len__(self):
            return 1

    figure = sessions_chart(Scores(), scenario="S1", system="A", top=10, fixed=False).figure
    line, stop = figure["data"]
    assert line["customdata"] == [session.pk] * 3 and stop["customdata"] == [session.pk]
