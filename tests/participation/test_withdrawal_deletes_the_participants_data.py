"""Withdrawal (from the closing page or by link) deletes events, judgments, queries and answers, and leaves an
audit entry that holds none of the deleted data."""

from studies.models import AuditEntry, Event, Judgment, JudgmentChange, Query, SearchSession, ShownResult
from studies.participation.way.form_steps import post_task_save, session_start
from studies.participation.way.steps import judgment_record, participant_withdraw, query_log, session_end

from .conftest import cid, start


def work(participant, session):
    q = query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    judgment_record(
        participant=participant, session=session, doc=q["results"][0]["doc"], grade=3, client_event_id=cid()
    )


def test_withdrawing_by_link_deletes_the_data_and_leaves_an_audit_entry(
    client, participant, session, other_participant
):
    work(participant, session)
    other_session = start(other_participant)
    work(other_participant, other_session)
    # consent, questionnaire, session start, query, judgment
    assert Event.objects.filter(participant=participant).count() == 5
    assert client.get(f"/p/{participant.access_token}/withdraw/").status_code == 200
    response = client.post(f"/p/{participant.access_token}/withdraw/")
    assert response.status_code == 302
    assert not Event.objects.filter(participant=participant).exists()
    assert not Judgment.objects.filter(session=session).exists()
    assert not Query.objects.filter(session=session).exists()
    participant.refresh_from_db()
    session.refresh_from_db()
    assert participant.withdrawn_at is not None and participant.questionnaire_answers == {}
    assert session.end_reason == SearchSession.EndReason.WITHDRAWN
    entry = AuditEntry.objects.get(action="participant_withdrawn")  # beside the state's own entries
    assert entry.participant_code == participant.code and entry.action == "participant_withdrawn"
    assert entry.detail == {
        "deleted": {"events": 5, "judgments": 1, "queries": 1, "sessions": 1},
        "scores": {"runs": [], "session_scores": 0, "power_plans": []},  # the study was never scored
    }
    assert "wing" not in str(entry.detail)
    # The other participant keeps everything.
    assert Event.objects.filter(participant=other_participant).count() == 5
    assert JudgmentChange.objects.count() == 1 and ShownResult.objects.count() == 10
    assert b"You have withdrawn" in client.get(f"/p/{participant.access_token}/").content


def test_withdrawing_twice_leaves_one_audit_entry(participant, session):
    participant_withdraw(participant=participant)
    assert participant_withdraw(participant=participant) is None
    assert AuditEntry.objects.filter(action="participant_withdrawn").count() == 1
    assert AuditEntry.objects.filter(action="participant_state", detail__to="withdrawn").count() == 1


def test_the_closing_page_has_the_withdraw_button(client, participant, session):
    for assignment in participant.assignments.order_by("position"):
        current = session_start(participant=participant, assignment=assignment, client_event_id=cid())
        session_end(participant=participant, session=current, reason="satisfied", client_event_id=cid())
        post_task_save(
            participant=participant, session=current, answers={"search_went_well": 5}, client_event_id=cid()
        )
    page = client.get(f"/p/{participant.access_token}/").content.decode()
    assert f'action="/p/{participant.access_token}/withdraw/"' in page
