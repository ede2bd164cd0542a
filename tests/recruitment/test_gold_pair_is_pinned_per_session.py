"""The gold pair is pinned per session the first time its step is computed: a server-only "gold_pair" event on
the session holds the two documents, the reference version and the order shown, so a reference version
published between the end of the search and the answer changes neither what the participant is shown nor what
they are scored against. Sessions without a pin (their step never computed, or computed before pins existed)
read the current pair."""

import pytest
from rest_framework.test import APIClient

from studies.errors import InvalidEvent, Refused
from studies.interchange.archive import study_archive_import, study_archive_json
from studies.kernel import steps
from studies.kernel.gold import PIN_EVENT, gold_pairs, gold_pin, gold_pinned
from studies.models import Event, Participant, SearchSession
from studies.participation.events.rules import client_id_check
from studies.participation.recruitment.panels import recruitment_update
from studies.participation.way import gold
from studies.participation.way.steps import participant_withdraw

from .conftest import cid, join, ready
from .test_gold_documents_inside_a_scenario import JUDGED, fresh, post_task, publish, search_done

pytestmark = pytest.mark.django_db

# Version 2 moves every topic's pair from (3, 9) to (1, 8).
SECOND = {**JUDGED, "1": 3, "8": 0}


@pytest.fixture
def person(panel_study):
    """A participant at their first task, of a study with gold documents on and version 1's pair (3, 9)."""
    publish(panel_study, {str(n): JUDGED for n in range(1, 5)})
    recruitment_update(study=panel_study, checks={"preset": "prolific", "gold": True})
    return ready(join(panel_study).participant)


def pins(session):
    return Event.objects.filter(session=session, type=PIN_EVENT)


def page_docs(client, participant) -> list[str]:
    html = client.get(f"/p/{participant.access_token}/").content.decode()
    assert "Two more documents for this task" in html
    shown = [doc for doc in ("1", "3", "8", "9") if f'name="grade-{doc}"' in html]
    return sorted(shown, key=lambda doc: html.index(f'name="grade-{doc}"'))  # in the order the page shows


def api_docs(participant) -> list[str]:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Participant {participant.access_token}")
    step = api.get("/api/participant/step/").json()
    assert step["kind"] == "gold"
    return [d["doc"] for d in step["gold"]["documents"]]


def second_version(study):
    publish(study, {str(n): SECOND for n in range(1, 5)}, note="second")
    pair = gold_pairs(study_id=study.pk, topic_ids=["1"])["1"]
    assert (pair.relevant.external_id, pair.off_topic.external_id, pair.version) == ("1", "8", 2)


def test_a_version_published_after_the_step_is_shown_changes_nothing_for_that_session(client, person):
    session = search_done(person)
    assert sorted(page_docs(client, person)) == ["3", "9"]
    second_version(person.study)
    # The page, the API and the step machine still show the pinned pair, in the same order.
    shown = api_docs(person)
    assert sorted(shown) == ["3", "9"] and sorted(page_docs(client, person)) == ["3", "9"]
    step = steps.participant_step(participant=fresh(person))
    assert (step.gold.relevant.external_id, step.gold.off_topic.external_id, step.gold.version) == (
        "3",
        "9",
        1,
    )
    # Scored against the pinned pair: 3 relevant, 9 off-topic, version 1.
    ack = gold.gold_answer_record(
        participant=fresh(person), session=session, grades={"3": 2, "9": 0}, client_event_id=cid()
    )
    assert ack["passed"] and (ack["relevant"], ack["off_topic"], ack["reference_version"]) == ("3", "9", 1)
    assert ack["shown"] == shown == pins(session).get().payload["data"]["order"]
    post_task(person, SearchSession.objects.get(pk=session.pk))
    # The next session, whose step is first computed after version 2, pins version 2's pair.
    later = search_done(fresh(person), position=2)
    assert sorted(page_docs(client, person)) == ["1", "8"]
    assert pins(later).get().payload["data"]["reference_version"] == 2


def test_the_pinned_pair_refuses_the_new_version_s_documents(person):
    session = search_done(person)
    steps.participant_step(participant=fresh(person))
    second_version(person.study)
    with pytest.raises(Refused, match="not one of this task's two documents"):
        gold.gold_answer_record(
            participant=fresh(person), session=session, grades={"1": 2, "8": 0}, client_event_id=cid()
        )
    assert not Event.objects.filter(session=session, type="gold").exists()


def test_one_pin_per_session_however_often_and_wherever_the_step_is_loaded(client, person):
    session = search_done(person)
    assert not pins(session).exists()  # ending the search pins nothing: the pin is what is first shown
    first = page_docs(client, person)
    assert page_docs(client, person) == first == api_docs(person) == api_docs(person)
    steps.participant_step(participant=fresh(person))
    pin = pins(session).get()
    assert pin.sequence is None and pin.client_time is None and pin.participant_id == person.pk
    assert pin.client_event_id == "server/gold-pair/1"
    assert pin.payload["data"] == {
        "source": "server",
        "topic": session.assignment.scenario.topic_id,
        "relevant": "3",
        "off_topic": "9",
        "relevant_grade": 3,
        "reference_version": 1,
        "order": first,
    }


def test_a_second_pin_at_the_same_moment_keeps_the_first(person):
    session = search_done(person)
    first = steps.participant_step(participant=fresh(person)).gold
    second_version(person.study)
    other = gold_pairs(study_id=person.study_id, topic_ids=[first.topic_id])[first.topic_id]
    # A request that computed the pair before the first pin was stored tries to pin version 2's pair.
    kept = gold_pin(
        participant=fresh(person), session=session, scenario=session.assignment.scenario, pair=other
    )
    assert (kept.relevant.external_id, kept.off_topic.external_id, kept.version) == ("3", "9", 1)
    assert pins(session).count() == 1


def test_no_client_can_take_the_pin_s_event_id():
    with pytest.raises(InvalidEvent):
        client_id_check("server/gold-pair/1")


def test_a_session_without_a_pin_reads_the_current_pair(person):
    session = search_done(person)
    second_version(person.study)
    # An answer sent without the step ever being computed: scored against the current pair, nothing pinned.
    ack = gold.gold_answer_record(
        participant=fresh(person), session=session, grades={"1": 3, "8": 0}, client_event_id=cid()
    )
    assert ack["passed"] and ack["reference_version"] == 2 and not pins(session).exists()
    assert steps.participant_step(participant=fresh(person)).kind == "post_task"
    post_task(person, SearchSession.objects.get(pk=session.pk))


def test_a_session_answered_before_pins_existed_is_never_pinned(person):
    session = search_done(person)
    steps.participant_step(participant=fresh(person))
    gold.gold_answer_record(
        participant=fresh(person), session=session, grades={"3": 3, "9": 0}, client_event_id=cid()
    )
    pins(session).delete()  # as a session answered before this change
    assert steps.participant_step(participant=fresh(person)).kind == "post_task"
    assert not pins(session).exists()
    post_task(person, SearchSession.objects.get(pk=session.pk))


def test_the_archive_keeps_the_pin_and_a_withdrawal_deletes_it(person, alice, tmp_path):
    session = search_done(person)
    shown = steps.participant_step(participant=fresh(person))
    order = list(shown.gold.order)
    second_version(person.study)
    path = tmp_path / "study.json"
    path.write_text(study_archive_json(study=person.study), encoding="utf-8")
    copy = study_archive_import(path=path, owner=alice, name="Copy")
    copied = Event.objects.get(participant__study=copy, type=PIN_EVENT)
    assert copied.payload == pins(session).get().payload
    assert copied.client_event_id == "server/gold-pair/1"
    # The copy's participant is still at the step (once its study turns gold documents on: the recruitment
    # settings are not in the archive), shown the pinned pair in the pinned order, not version 2's.
    recruitment_update(study=copy, checks={"preset": "prolific", "gold": True})
    twin = Participant.objects.select_related("study").get(study=copy, code=person.code)
    step = steps.participant_step(participant=twin)
    assert step.kind == "gold" and list(step.gold.order) == order and step.gold.version == 1
    assert gold_pinned(participant=twin, session=step.session).relevant.external_id == "3"
    participant_withdraw(participant=fresh(person))
    assert not Event.objects.filter(participant=person).exists()
