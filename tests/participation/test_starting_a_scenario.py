"""The scenario page's "Start searching" starts the session of the current assignment, once."""

from studies.models import Event, SearchSession

from .conftest import ready


def test_start_searching_starts_the_current_assignments_session(client, participant):
    ready(participant)
    first = participant.assignments.get(position=1)
    form = {"assignment": first.pk, "client_event_id": "start-1", "sequence": "3"}
    response = client.post(f"/p/{participant.access_token}/start/", form)
    assert response.status_code == 302
    session = SearchSession.objects.get(assignment=first)
    assert session.ended_at is None
    # A second click (or a re-sent form) resumes the same session.
    client.post(f"/p/{participant.access_token}/start/", form)
    client.post(f"/p/{participant.access_token}/start/", {**form, "client_event_id": "start-2"})
    assert SearchSession.objects.count() == 1
    assert Event.objects.filter(type="session_start").count() == 1
    assert Event.objects.get(type="session_start").sequence == 3


def test_a_later_assignment_cannot_be_started_first(client, participant):
    ready(participant)
    third = participant.assignments.get(position=3)
    response = client.post(
        f"/p/{participant.access_token}/start/", {"assignment": third.pk, "client_event_id": "s"}
    )
    assert response.status_code == 409 and b"in the order given" in response.content
    assert not SearchSession.objects.exists()
