"""Simulated searchers with each strategy work a real study through the participant's services (queries on
the study's search systems, document views, judgments, scan marks, session ends), and their logs show the
strategy: the queries generated, where each list was left, the time budget, the judging agreement."""

from datetime import timedelta

import pytest
from django.db.models import Max, Min

from scoring.planning.simulate import studies_services
from studies.models import Event, Judgment, Query, SearchSession
from studies.simulation.searchers import (
    Costs,
    Strategy,
    document_terms,
    participants_simulate_with,
    pivot_queries,
    ranked_terms,
)

from .conftest import TOPICS, reference_of

pytestmark = pytest.mark.django_db


def _simulate(study, strategy, count=4, texts=None):
    people = studies_services()[0].participants_enrol(study=study, count=count)
    participants_simulate_with(
        participants=people, reference=reference_of(study), strategy=strategy, relevant_texts=texts, seed=3
    )
    return SearchSession.objects.filter(assignment__participant__study=study).select_related(
        "assignment__scenario"
    )


def test_term_queries_follow_the_pivot_of_the_scenario_terms(searchable_study):
    sessions = _simulate(
        searchable_study, Strategy(queries="terms", query_length=3, max_queries=3, stopping="fixed", depth=2)
    )
    for session in sessions:
        scenario = session.assignment.scenario
        expected = [
            " ".join(q) for q in pivot_queries(ranked_terms(scenario.text, title=scenario.title), 3, 3)
        ]
        texts = list(session.queries.order_by("position").values_list("text", flat=True))
        assert texts == expected[: len(texts)] and texts


def test_relevant_document_terms_join_the_queries(searchable_study):
    from scoring.planning.simulate import reference_grades, relevant_texts

    texts = relevant_texts(searchable_study, reference_grades(searchable_study)[0])
    sessions = _simulate(
        searchable_study,
        Strategy(queries="relevant", query_length=2, max_queries=11, stopping="fixed", depth=1),
        texts=texts,
    )
    used = set()
    for session in sessions:
        scenario = session.assignment.scenario
        own = ranked_terms(scenario.text, title=scenario.title)
        learned = set(document_terms(texts[scenario.topic_id], exclude=own))
        for text in session.queries.values_list("text", flat=True):
            used |= set(text.split()) & learned
    assert used  # some query used a term only the relevant documents have


@pytest.mark.parametrize("depth", [1, 3])
def test_a_fixed_depth_searcher_reads_that_many_snippets(searchable_study, depth):
    _simulate(searchable_study, Strategy(stopping="fixed", depth=depth, max_queries=2))
    marks = set(
        Query.objects.filter(session__assignment__participant__study=searchable_study).values_list(
            "scan_mark_rank", flat=True
        )
    )
    assert marks - {None} == {depth}  # None: a query that found nothing has no list to read


def test_a_satisfied_searcher_leaves_a_list_after_k_relevant(searchable_study):
    # one query per session, so every judgment of a session comes from one list
    _simulate(searchable_study, Strategy(stopping="satisfaction", satisfied_after=1, max_queries=1), count=8)
    graded = Judgment.objects.filter(session__assignment__participant__study=searchable_study)
    assert graded.filter(grade__gt=0).exists()
    for session in SearchSession.objects.filter(assignment__participant__study=searchable_study):
        assert graded.filter(session=session, grade__gt=0).count() <= 1


def test_a_frustrated_searcher_leaves_a_list_after_k_not_relevant(searchable_study):
    _simulate(searchable_study, Strategy(stopping="frustration", frustrated_after=2, max_queries=1), count=8)
    marks = []
    for query in Query.objects.filter(session__assignment__participant__study=searchable_study):
        relevant = Judgment.objects.filter(session=query.session, grade__gt=0).count()
        if query.scan_mark_rank is not None:
            # two snippets that were not relevant, and the relevant ones read on the way
            assert query.scan_mark_rank <= 2 + relevant
            marks.append(query.scan_mark_rank)
    assert marks and max(marks) < 10  # nobody read the whole page


def test_a_time_limited_searcher_stops_within_its_budget(searchable_study):
    costs = Costs(query=10, snippet=2, document=20, judgment=3)
    sessions = _simulate(
        searchable_study, Strategy(time_limit=60, costs=costs, max_queries=11, stopping="fixed", depth=10)
    )
    spans = (
        Event.objects.filter(participant__study=searchable_study, session__isnull=False)
        .values("session_id")
        .annotate(first=Min("client_time"), last=Max("client_time"))
    )
    for span in spans:
        # the actions' costs within the budget; session start and end events cost nothing
        assert span["last"] - span["first"] <= timedelta(seconds=60)
    # the study has no time limit of its own: a searcher out of time gives up
    assert {s.end_reason for s in sessions} <= {"gave_up", "satisfied"}
    assert "gave_up" in {s.end_reason for s in sessions}


def test_a_target_agreement_of_one_judges_as_the_reference(searchable_study):
    _simulate(searchable_study, Strategy(agreement=1.0, max_queries=3))
    reference = reference_of(searchable_study)
    judged = Judgment.objects.filter(session__assignment__participant__study=searchable_study).values_list(
        "session__assignment__scenario__topic_id", "document__external_id", "grade"
    )
    assert judged
    assert all(grade == reference.get(topic, {}).get(doc, 0) for topic, doc, grade in judged)


def test_the_scenarios_of_the_fixture_are_the_topics():
    assert set(TOPICS) == {"1", "2", "3", "4"}
