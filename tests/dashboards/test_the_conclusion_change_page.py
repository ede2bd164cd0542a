"""/scoring/<slug>/reference-change/: the study's conclusion under a people-only reference and
under one a machine assessor's grades filled, on a constructed study where the machine's grades flip the
system order and one where they do not; a bad version is a 400 or a 404 naming the parameter."""

import numpy as np
import pytest
from django.urls import reverse

from scoring.models import SessionScore
from studies.assessment import pools, references
from studies.models import ReferenceJudgment
from tests.assessment.machine_factories import machine_assessor_make, machine_grades_give, machine_words
from tests.factories import study_scored

from .conftest import make_session

A_DOCS, B_DOCS = ["d0", "d1", "d2"], ["d3", "d4", "d5"]


def build(study, docs, capture, *, people_a: int, machine_b: int, unjudged_topics: int = 0):
    """8 participants x 4 scenarios; a session on A shows 1-3 of A_DOCS, on B 1-3 of B_DOCS, then filler.
    v1 (people): A_DOCS graded `people_a`, B_DOCS unjudged; the default run is scored on it. v2: merged
    into v1, the machine fills B_DOCS with `machine_b` (A_DOCS it also grades 0, but v1 holds them)."""
    from studies.design import services

    for index, participant in enumerate(services.participants_enrol(study=study, count=8)):
        for assignment in participant.assignments.select_related("system").order_by("position"):
            ours = A_DOCS if assignment.system.code == "A" else B_DOCS
            shown = ours[: 1 + (index + assignment.position) % 3] + ["d10", "d11"]
            make_session(assignment, [shown], docs=docs)
    topics = list(study.scenarios.order_by("id").values_list("topic_id", flat=True))[unjudged_topics:]
    references.reference_version_create(
        study=study,
        judgments=[
            ReferenceJudgment(topic_id=topic, document=docs[d], grade=people_a)
            for topic in topics
            for d in A_DOCS
        ],
        note="people",
    )
    run = study_scored(study, capture)
    machine = machine_assessor_make(study)
    for scenario in study.scenarios.all():
        pools.pool_add_documents(scenario=scenario, external_ids=A_DOCS + B_DOCS, added_by=study.owner)
        machine_grades_give(
            machine, {**dict.fromkeys(A_DOCS, 0), **dict.fromkeys(B_DOCS, machine_b)}, scenario.code
        )
    version = references.reference_version_publish(
        study=study, created_by=study.owner, machine=machine, rules=["fill_unjudged"]
    )
    assert version.number == 2
    assert unjudged_topics or version.facts["documents_filled"] == 12
    return run


def page(client, study, query=""):
    client.force_login(study.owner)
    return client.get(reverse("scoring:reference_change", args=[study.slug]) + query)


def test_machine_grades_that_flip_the_order_change_the_conclusion(
    designed_study, collection_docs, django_capture_on_commit_callbacks, client
):
    run = build(designed_study, collection_docs, django_capture_on_commit_callbacks, people_a=1, machine_b=3)
    response = page(client, designed_study)
    assert response.status_code == 200
    result = response.context["result"]
    assert (result.before.number, result.after.number, result.sessions, result.participants) == (1, 2, 32, 8)
    change = result.changes["final"]
    assert change.before.order == ["A", "B"] and change.after.order == ["B", "A"]
    assert change.tau_systems.tau == pytest.approx(-1.0)
    # Under v1, the run's own version, the means are the stored scores' means.
    stored = SessionScore.objects.filter(run=run)
    for system in ("A", "B"):
        finals = list(stored.filter(system__code=system).values_list("final", flat=True))
        assert change.before.means[system] == pytest.approx(np.mean(finals))
    assert change.before.means["B"] == 0.0
    text = response.content.decode()
    assert "The conclusion changes: the order of systems A &gt; B under v1 becomes B &gt; A under v2" in text
    assert "32 sessions of 8 participants" in text and "intention to treat" in text
    machine = designed_study.assessors.get(llm__isnull=False)
    assert f"{machine_words(machine)}: 12 documents filled" in text


def test_machine_grades_that_keep_the_order_keep_the_conclusion(
    designed_study, collection_docs, django_capture_on_commit_callbacks, client
):
    build(designed_study, collection_docs, django_capture_on_commit_callbacks, people_a=3, machine_b=1)
    response = page(client, designed_study)
    change = response.context["result"].changes["final"]
    assert change.before.order == change.after.order == ["A", "B"]
    assert change.before.means["B"] == 0.0 < change.after.means["B"] < change.after.means["A"]
    assert change.sentence.startswith(
        "The conclusion holds: the same order of systems (A > B) under v1 and v2"
    )
    assert change.tau_systems.tau == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ("?from=abc", 400, "from: 'abc' is not a reference version number"),
        ("?to=v99", 404, "to: the study has no reference version 99"),
        ("?from=1&to=-2", 400, "to: '-2' is not a reference version number"),
        ("?population=nobody", 400, "population"),
    ],
)
def test_a_bad_version_names_the_parameter(designed_study, collection_docs, client, query, status, message):
    references.reference_version_create(
        study=designed_study,
        judgments=[ReferenceJudgment(topic_id="1", document=collection_docs["d0"], grade=1)],
    )
    response = page(client, designed_study, query)
    assert response.status_code == status and message in response.content.decode()


def test_without_a_machine_version_the_page_says_what_to_do(designed_study, collection_docs, client):
    references.reference_version_create(
        study=designed_study,
        judgments=[ReferenceJudgment(topic_id="1", document=collection_docs["d0"], grade=1)],
    )
    response = page(client, designed_study)
    assert response.status_code == 200 and response.context["result"] is None
    assert "no default scoring run yet" in response.content.decode()


def test_the_page_stores_nothing_and_keeps_to_a_query_budget(
    designed_study, collection_docs, django_capture_on_commit_callbacks, client, django_assert_max_num_queries
):
    run = build(designed_study, collection_docs, django_capture_on_commit_callbacks, people_a=1, machine_b=3)
    stored = sorted(
        SessionScore.objects.filter(run=run).values_list("session_id", "final", "reference_version")
    )
    client.force_login(designed_study.owner)
    url = reverse("scoring:reference_change", args=[designed_study.slug])
    with django_assert_max_num_queries(20):  # whatever the study's size: a chunk is 500 sessions
        assert client.get(url).status_code == 200
    run.refresh_from_db()
    assert run.reference_version.number == 1
    assert (
        sorted(SessionScore.objects.filter(run=run).values_list("session_id", "final", "reference_version"))
        == stored
    )


def test_the_chart_json_puts_each_cell_under_both_versions(
    designed_study, collection_docs, django_capture_on_commit_callbacks, client
):
    build(designed_study, collection_docs, django_capture_on_commit_callbacks, people_a=1, machine_b=3)
    client.force_login(designed_study.owner)
    page_text = page(client, designed_study).content.decode()
    url = reverse("scoring:reference_change_json", args=[designed_study.slug])
    assert f'data-url="{url}?' in page_text
    payload = client.get(url).json()
    no_change, *systems = payload["figure"]["data"]
    assert no_change["name"] == "no change" and [trace["name"] for trace in systems] == [
        "system A",
        "system B",
    ]
    system_a, system_b = systems
    assert sorted(system_a["text"]) == ["S1", "S2", "S3", "S4"] and sum(system_a["customdata"]) == 16
    assert all(x > 0 for x in system_a["x"]) and system_b["x"] == [0.0] * 4  # B: nothing judged under v1
    assert all(y > 0 for y in system_b["y"])  # the machine's grades, under v2
    assert "n = 32 sessions of 8 participants" in payload["notes"][0]
    assert client.get(url + "?from=x").status_code == 400


def test_the_verdict_counts_exactly_the_dashboard_s_sessions(
    designed_study, collection_docs, django_capture_on_commit_callbacks, client
):
    """Sessions on a scenario the run's reference does not judge are left out by the dashboard; the
    conclusion-change page counted them (6 sessions against the dashboard's n = 3 in one check). Its
    n is now the dashboard's."""
    from scoring.selectors import ChartFilters, run_scores

    run = build(
        designed_study,
        collection_docs,
        django_capture_on_commit_callbacks,
        people_a=1,
        machine_b=3,
        unjudged_topics=1,
    )
    shown = run_scores(run, ChartFilters()).session_id
    assert len(shown) == 24
    response = page(client, designed_study)
    result = response.context["result"]
    assert (result.sessions, result.participants) == (24, 8)
    assert "24 sessions of 8 participants" in response.content.decode()
