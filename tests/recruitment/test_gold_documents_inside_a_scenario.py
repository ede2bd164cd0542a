"""Gold documents inside a scenario: with the study's setting on, each scenario whose topic has, in the newest
reference version, a document at its top grade and one judged 0 gets a step after its search and before its
post-task questions, where the participant judges those two; the answer is scored (relevant >= 1, off-topic
0), a failure counts as a failed attention check, and the gold grades never become the session's judgments."""

import pytest

from studies.assessment.references import reference_version_create
from studies.design.lifecycle import preview_start
from studies.errors import InvalidAnswers, RecruitmentError, Refused
from studies.interchange.archive import study_archive_import, study_archive_json
from studies.interchange.tidy_csv import study_tables
from studies.kernel import steps
from studies.kernel.gold import GoldPair, gold_order, gold_pairs
from studies.kernel.states import state_of
from studies.models import (
    Document,
    Event,
    Judgment,
    Participant,
    Recruitment,
    ReferenceJudgment,
    SearchSession,
)
from studies.participation.recruitment.completion import completion_of
from studies.participation.recruitment.panels import recruitment_update
from studies.participation.way import gold
from studies.participation.way.check_answers import check_answer_record
from studies.participation.way.form_steps import post_task_save, session_start
from studies.participation.way.steps import query_log, session_end
from studies.simulation.participants import participants_simulate
from studies.simulation.searchers import Strategy, participants_simulate_with

from .conftest import cid, join, ready

pytestmark = pytest.mark.django_db

# Every topic: documents 3 and 5 at the top grade, 2 marginal, 9 and 10 judged 0: the pair is (3, 9).
JUDGED = {"5": 3, "3": 3, "2": 1, "10": 0, "9": 0}


def publish(study, topics: dict[str, dict[str, int]], note="test"):
    documents = {d.external_id: d for d in Document.objects.filter(collection=study.collection)}
    rows = [
        ReferenceJudgment(topic_id=topic, document=documents[doc], grade=grade, source=note)
        for topic, grades in topics.items()
        for doc, grade in grades.items()
    ]
    return reference_version_create(study=study, judgments=rows, note=note)


@pytest.fixture
def gold_study(panel_study):
    publish(panel_study, {str(n): JUDGED for n in range(1, 5)})
    recruitment_update(study=panel_study, checks={"preset": "prolific", "gold": True})
    return panel_study


@pytest.fixture
def person(gold_study):
    return ready(join(gold_study).participant)


def fresh(participant):
    return Participant.objects.select_related("study").get(pk=participant.pk)


def search_done(participant, position=1, query=None):
    """The participant's search at `position`: started, (a query), ended."""
    assignment = participant.assignments.get(position=position)
    session = session_start(participant=participant, assignment=assignment, client_event_id=cid())
    if query:
        query_log(participant=participant, session=session, text=query, client_event_id=cid())
    session_end(participant=participant, session=session, reason="satisfied", client_event_id=cid())
    return SearchSession.objects.select_related("assignment__scenario").get(pk=session.pk)


def judge(participant, session, relevant, off_topic, event_id=None):
    return gold.gold_answer_record(
        participant=fresh(participant),
        session=session,
        grades={"3": relevant, "9": off_topic},
        client_event_id=event_id or cid(),
    )


def post_task(participant, session):
    return post_task_save(
        participant=fresh(participant),
        session=session,
        client_event_id=cid(),
        answers={"search_went_well": 4},
    )


# --- the pair -----------------------------------------------------------------------------------------


def test_the_pair_is_the_lowest_id_at_the_top_grade_and_the_lowest_id_judged_0(panel_study):
    publish(
        panel_study,
        {
            "1": JUDGED,
            "2": {"4": 2, "6": 2, "7": 1},  # nothing judged 0: no pair
            "3": {"11": 0, "12": 0},  # nothing above 0: no pair
        },
    )
    pairs = gold_pairs(study_id=panel_study.pk, topic_ids=["1", "2", "3", "4"])
    assert set(pairs) == {"1"}
    pair = pairs["1"]
    # 9 before 10: numeric ids in number order.
    assert (pair.relevant.external_id, pair.relevant_grade, pair.off_topic.external_id) == ("3", 3, "9")
    assert pair.version == 1


def test_the_newest_reference_version_gives_the_pair(panel_study):
    publish(panel_study, {"1": JUDGED})
    publish(panel_study, {"1": {**JUDGED, "1": 3, "8": 0}}, note="second")
    pair = gold_pairs(study_id=panel_study.pk, topic_ids=["1"])["1"]
    assert (pair.relevant.external_id, pair.off_topic.external_id, pair.version) == ("1", "8", 2)


def test_the_order_is_fixed_per_participant_and_differs_between_participants(gold_study):
    pair = gold_pairs(study_id=gold_study.pk, topic_ids=["1"])["1"]
    orders = set()
    for number in range(40):
        someone = Participant(pk=10_000 + number, code=f"P{number}")
        first = [d.external_id for d in gold_order(participant=someone, scenario_id=1, pair=pair)]
        assert first == [d.external_id for d in gold_order(participant=someone, scenario_id=1, pair=pair)]
        assert sorted(first) == ["3", "9"]
        orders.add(tuple(first))
    assert orders == {("3", "9"), ("9", "3")}


# --- the step -----------------------------------------------------------------------------------------


def test_the_gold_step_comes_after_the_search_and_before_the_post_task_questions(client, person):
    assignment = person.assignments.get(position=1)
    assert steps.participant_step(participant=fresh(person)).kind in ("scenario", "pre_task")
    session = session_start(participant=person, assignment=assignment, client_event_id=cid())
    assert steps.participant_step(participant=fresh(person)).kind == "search"
    session_end(participant=person, session=session, reason="gave_up", client_event_id=cid())
    step = steps.participant_step(participant=fresh(person))
    assert step.kind == "gold" and step.session.pk == session.pk
    assert isinstance(step.gold, GoldPair)
    html = client.get(f"/p/{person.access_token}/").content.decode()
    assert "Two more documents for this task" in html and 'id="gold-form"' in html
    for doc in ("3", "9"):
        document = Document.objects.get(collection=person.study.collection, external_id=doc)
        assert document.title in html and f'name="grade-{doc}"' in html
    # Never says which is which.
    assert "relevant doc" not in html and "off-topic" not in html.lower()
    with pytest.raises(Refused, match="two documents of this task first"):
        post_task(person, SearchSession.objects.get(pk=session.pk))
    response = client.post(
        f"/p/{person.access_token}/gold/",
        {"session": session.pk, "grade-3": "2", "grade-9": "0", "client_event_id": cid()},
    )
    assert response.status_code == 302
    assert steps.participant_step(participant=fresh(person)).kind == "post_task"
    post_task(person, SearchSession.objects.get(pk=session.pk))
    assert steps.participant_step(participant=fresh(person)).position == 2


def test_no_gold_step_when_the_setting_is_off(person):
    recruitment_update(study=person.study, checks={})
    search_done(person)
    assert steps.participant_step(participant=fresh(person)).kind == "post_task"


def test_no_gold_step_when_the_topic_lacks_a_pair(person):
    topic = person.assignments.get(position=1).scenario.topic_id
    publish(person.study, {topic: {"3": 3, "5": 2}})  # a newer version: nothing judged 0 for this topic
    session = search_done(person)
    assert steps.participant_step(participant=fresh(person)).kind == "post_task"
    with pytest.raises(Refused, match="no further documents"):
        judge(person, session, 3, 0)


def test_a_task_already_answered_before_the_setting_was_turned_on_asks_nothing(person):
    recruitment_update(study=person.study, checks={})
    session = search_done(person)
    post_task(person, session)
    recruitment_update(study=person.study, checks={"gold": True})
    assert steps.participant_step(participant=fresh(person)).kind in ("scenario", "pre_task")
    with pytest.raises(Refused, match="finished"):
        judge(person, SearchSession.objects.get(pk=session.pk), 3, 0)


# --- scoring ------------------------------------------------------------------------------------------


def test_the_relevant_one_graded_1_or_more_and_the_off_topic_one_0_pass(person):
    session = search_done(person)
    ack = judge(person, session, 1, 0)
    assert ack["passed"] and ack["reason"] == ""
    assert (ack["relevant"], ack["off_topic"], ack["reference_version"]) == ("3", "9", 1)
    assert sorted(ack["shown"]) == ["3", "9"]
    event = Event.objects.get(participant=person, type="gold")
    assert event.session_id == session.pk and event.payload["data"] == {"3": 1, "9": 0}
    assert state_of(fresh(person)) != "screened_out"


@pytest.mark.parametrize(
    "relevant, off_topic, reason",
    [
        (0, 0, "judged relevant doc 3 as 0"),
        (3, 2, "judged off-topic doc 9 as 2"),
        (0, 3, "judged relevant doc 3 as 0; judged off-topic doc 9 as 3"),
    ],
)
def test_a_failure_is_recorded_with_its_reason_and_the_study_goes_on(person, relevant, off_topic, reason):
    session = search_done(person)
    ack = judge(person, session, relevant, off_topic)
    code = session.assignment.scenario.code
    assert not ack["passed"] and ack["reason"] == f"gold documents of scenario {code}: {reason}"
    assert "screened_out" not in ack
    assert state_of(fresh(person)) != "screened_out"
    assert steps.participant_step(participant=fresh(person)).kind == "post_task"


def test_two_gold_failures_screen_out_with_the_failed_checks_code_under_prolific(client, person):
    first = search_done(person)
    judge(person, first, 0, 0)
    post_task(person, first)
    second = search_done(fresh(person), position=2)
    ack = judge(person, second, 3, 3)
    assert ack["screened_out"]
    screened = fresh(person)
    assert screened.state == "screened_out"
    code = second.assignment.scenario.code
    assert screened.state_reason == (
        f"failed checks: 2 attention checks failed (last: gold documents of scenario {code})"
    )
    assert completion_of(screened).kind == "failed_checks"
    assert 'id="completion"' in client.get(f"/p/{person.access_token}/").content.decode()


def test_one_gold_failure_screens_out_under_strict_and_frees_the_row(person):
    recruitment_update(study=person.study, checks={"preset": "strict", "gold": True})
    ack = judge(person, search_done(person), 0, 0)
    assert ack["screened_out"] and fresh(person).state == "screened_out"
    assert join(person.study).participant.plan_row == person.plan_row


def test_a_failed_attention_check_and_a_gold_failure_add_up(person):
    items = [
        {
            "name": "att",
            "kind": "attention",
            "label": "Choose Blue.",
            "choices": ["Red", "Blue"],
            "answer": "Blue",
        }
    ]
    recruitment_update(study=person.study, checks={"preset": "prolific", "items": items, "gold": True})
    assert not check_answer_record(
        participant=fresh(person), name="att", answer="Red", client_event_id=cid()
    )["passed"]
    assert judge(person, search_done(fresh(person)), 0, 0)["screened_out"]


def test_a_replayed_answer_is_stored_once(person):
    session = search_done(person)
    event_id = cid()
    first = judge(person, session, 3, 0, event_id)
    again = judge(person, session, 0, 3, event_id)
    assert first == again and first["passed"]
    assert Event.objects.filter(participant=person, type="gold").count() == 1
    with pytest.raises(Refused, match="already judged"):
        judge(person, session, 3, 0)


# --- hostile input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "grades, message",
    [
        ({"3": 3, "9": 0, "17": 1}, "'17' is not one of this task's two documents"),
        ({"3": 3, "<script>": 0}, "is not one of this task's two documents"),
    ],
)
def test_hostile_answers_are_refused_with_a_reason_and_store_nothing(person, grades, message):
    session = search_done(person)
    with pytest.raises(Refused, match=message):
        gold.gold_answer_record(
            participant=fresh(person), session=session, grades=grades, client_event_id=cid()
        )
    assert not Event.objects.filter(type="gold").exists()


@pytest.mark.parametrize(
    "grades, message",
    [
        ({"3": 7, "9": 0}, "grade '7' for document 3 is not on this study's scale"),
        ({"3": "x", "9": 0}, "not on this study's scale"),
        ({"3": True, "9": 0}, "not on this study's scale"),
        ({"3": "9" * 30, "9": 0}, "not on this study's scale"),
    ],
)
def test_a_grade_off_the_scale_is_an_answer_to_fix_at_its_document(person, grades, message):
    session = search_done(person)
    with pytest.raises(InvalidAnswers) as refused:
        gold.gold_answer_record(
            participant=fresh(person), session=session, grades=grades, client_event_id=cid()
        )
    assert list(refused.value.errors) == ["3"] and message in refused.value.errors["3"]
    assert not Event.objects.filter(type="gold").exists()


def test_the_page_shows_a_grade_off_the_scale_at_its_document(client, person):
    session = search_done(person)
    response = client.post(
        f"/p/{person.access_token}/gold/",
        {"session": session.pk, "grade-3": "7", "grade-9": "0", "client_event_id": cid()},
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert (
        page.count("has-error") == 1
        and "grade &#x27;7&#x27; for document 3 is not on this study&#x27;s scale" in page
    )
    assert not Event.objects.filter(type="gold").exists()


def test_another_participant_s_session_is_refused(client, gold_study, person):
    other = ready(join(gold_study).participant)
    theirs = search_done(other)
    with pytest.raises(Refused, match="not one of your search sessions"):
        gold.gold_answer_record(
            participant=fresh(person), session=theirs, grades={"3": 3, "9": 0}, client_event_id=cid()
        )
    response = client.post(
        f"/p/{person.access_token}/gold/",
        {"session": theirs.pk, "grade-3": "3", "grade-9": "0", "client_event_id": cid()},
    )
    assert response.status_code == 404
    assert not Event.objects.filter(type="gold").exists()


def test_hostile_forms_get_a_reason_never_a_server_error(client, person):
    session = search_done(person)
    url = f"/p/{person.access_token}/gold/"
    for data, status in [
        ({"session": session.pk, "grade-3": "3", "grade-99": "0", "client_event_id": cid()}, 409),
        # a grade off the scale: the page again, the reason at the document (as for one left without a grade)
        ({"session": session.pk, "grade-3": "12", "grade-9": "0", "client_event_id": cid()}, 400),
        ({"session": session.pk, "grade-3": "\x00", "grade-9": "0", "client_event_id": cid()}, 400),
        ({"session": session.pk, "grade-3": "3", "client_event_id": cid()}, 400),  # one left without a grade
        ({"session": "²", "grade-3": "3", "grade-9": "0", "client_event_id": cid()}, 400),
        ({"session": "9" * 30, "grade-3": "3", "grade-9": "0", "client_event_id": cid()}, 400),
        ({"session": session.pk, "grade-3": "3", "grade-9": "0", "client_event_id": "x" * 500}, 400),
    ]:
        response = client.post(url, data)
        assert response.status_code == status, (data, response.status_code)
    missing = client.post(url, {"session": session.pk, "grade-3": "3", "client_event_id": cid()})
    assert "Please choose a grade." in missing.content.decode()
    refused = client.post(
        url, {"session": session.pk, "grade-3": "3", "grade-99": "0", "client_event_id": cid()}
    )
    assert "not one of this task" in refused.content.decode()
    assert not Event.objects.filter(type="gold").exists()


# --- apart from the session's data -------------------------------------------------------------------


def test_gold_grades_are_no_judgments_and_leave_the_scores_alone(person, django_capture_on_commit_callbacks):
    from scoring import services as scoring_services
    from scoring.models import SessionScore

    session = search_done(person, query="wing")  # documents 1-25 mention wing: 3 is on the list shown
    assert session.queries.get().shown_results.filter(document__external_id="3").exists()
    judge(person, session, 3, 0)
    post_task(person, session)
    assert not Judgment.objects.filter(session=session).exists()
    # Scored with the participant's own judgments: had the gold grade of 3 become one, document 3 on the
    # list would score above 0.
    with django_capture_on_commit_callbacks(execute=True):
        run = scoring_services.scoring_run_create(study=person.study, judgments="participant")
    run.refresh_from_db()
    assert run.status == "done", run.error
    assert SessionScore.objects.get(run=run, session=session).final == 0


# --- the simulation, the tidy CSV, the archive, the researcher's page ---------------------------------


@pytest.mark.parametrize("strategic", [False, True])
def test_simulated_participants_pass_through_the_gold_step(gold_study, strategic):
    people = [join(gold_study).participant for _ in range(2)]
    reference = {str(n): JUDGED for n in range(1, 5)}
    if strategic:
        participants_simulate_with(participants=people, reference=reference, strategy=Strategy(max_queries=2))
    else:
        participants_simulate(participants=people, reference=reference, seed=3)
    for someone in people:
        assert state_of(fresh(someone)) != "screened_out"
        sessions = SearchSession.objects.filter(assignment__participant=someone)
        assert sessions.count() == someone.assignments.count()
        assert all(s.post_task_answers for s in sessions)
        acks = [e.payload["ack"] for e in Event.objects.filter(participant=someone, type="gold")]
        assert len(acks) == sessions.count() and all(ack["passed"] for ack in acks)


def test_the_tidy_csv_and_the_archive_carry_the_outcome(person, alice, tmp_path):
    first = search_done(person)
    judge(person, first, 3, 0)
    post_task(person, first)
    second = search_done(fresh(person), position=2)
    judge(person, second, 0, 0)
    post_task(person, second)
    search_done(fresh(person), position=3)  # ended, gold not answered yet

    def gold_column(study):
        rows = study_tables(study=study)["sessions"]
        column = rows[0].index("gold_passed")
        return {(row[1], row[2]): row[column] for row in rows[1:]}

    assert gold_column(person.study) == {(person.code, 1): 1, (person.code, 2): 0, (person.code, 3): ""}
    path = tmp_path / "study.json"
    path.write_text(study_archive_json(study=person.study), encoding="utf-8")
    copy = study_archive_import(path=path, owner=alice, name="Copy")
    assert gold_column(copy) == gold_column(person.study)
    copied = Event.objects.filter(participant__study=copy, type="gold").order_by("id")
    assert [e.payload for e in copied] == [
        e.payload for e in Event.objects.filter(participant=person, type="gold").order_by("id")
    ]


def test_the_researcher_turns_gold_on_and_sees_pairs_and_outcomes(client, alice, gold_study, person):
    judge(person, search_done(person), 0, 0)
    client.force_login(alice)
    found = Recruitment.objects.get(study=gold_study)
    form = {
        "panel": "prolific",
        "code_completed": found.code_completed,
        "code_screened_out": found.code_screened_out,
        "code_failed_checks": found.code_failed_checks,
        "checks_preset": "strict",
    }
    assert client.post(f"/studies/{gold_study.slug}/recruitment/", form).status_code == 302
    assert Recruitment.objects.get(study=gold_study).checks == {}
    assert (
        client.post(f"/studies/{gold_study.slug}/recruitment/", {**form, "checks_gold": "on"}).status_code
        == 302
    )
    assert Recruitment.objects.get(study=gold_study).checks == {"preset": "strict", "items": [], "gold": True}
    html = client.get(f"/studies/{gold_study.slug}/recruitment/").content.decode()
    assert 'id="gold-pairs"' in html and "<code>3</code> (3)" in html and "<code>9</code>" in html
    assert person.code in html and "judged relevant doc 3 as 0" in html


@pytest.mark.parametrize("checks", [{"gold": "yes"}, {"gold": 1}, {"gold": True, "golden": True}])
def test_a_malformed_gold_setting_is_refused(panel_study, checks):
    with pytest.raises(RecruitmentError, match="gold"):
        recruitment_update(study=panel_study, checks=checks)


def test_a_preview_shows_the_gold_step_too(alice, gold_study):
    preview = ready(preview_start(study=gold_study, by=alice))
    session = search_done(preview)
    assert steps.participant_step(participant=fresh(preview)).kind == "gold"
    assert judge(preview, session, 3, 0)["passed"]
