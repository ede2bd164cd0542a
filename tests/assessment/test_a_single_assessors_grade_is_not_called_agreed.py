"""A document graded by one person alone is settled as "single assessor", never "agreed": with one assessor
nothing was agreed between two people. The preset's outcome on the page, the published version's sources in
the API and the archive all say so; the migration relabels earlier decisions."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse

from studies.assessment import adjudication, assessors, pools, references
from studies.interchange.archive.export import study_archive
from studies.models import AdjudicationDecision, AssessorAssignment
from tests.interchange.api_helpers import client_for

from .conftest import grade_all


def methods(study):
    return dict(
        AdjudicationDecision.objects.filter(pool_document__pool__scenario__study=study).values_list(
            "pool_document__document__external_id", "method"
        )
    )


def test_one_assessor_s_grades_are_single_assessor_decisions(assessed_study, make_assessors, alice):
    [ann] = make_assessors(assessed_study, "ann", per_document=1)
    grade_all(assessed_study, {"d1": [2], "d2": [0], "d3": [3]}, [ann])
    result = adjudication.adjudicate(study=assessed_study, preset="2002", decided_by=alice)
    assert methods(assessed_study) == {
        "d1": "single_assessor",
        "d2": "single_assessor",
        "d3": "single_assessor",
    }
    assert result.decided_text() == "3 single assessor (no second grade)"
    decision = AdjudicationDecision.objects.get(pool_document__document__external_id="d1")
    assert (decision.grade, decision.judged_by, decision.note) == (2, ann, "graded by ann alone")


def test_a_document_dealt_to_one_of_two_assessors_is_single_and_a_shared_one_agreed(
    assessed_study, make_assessors, alice
):
    ann, ben = make_assessors(assessed_study, "ann", "ben", per_document=2)
    grade_all(assessed_study, {"d3": [3, 3]}, [ann, ben], code="S2")
    assessors.assessment_plan_set(study=assessed_study, assessors_per_document=1)
    scenario = assessed_study.scenarios.get(code="S1")
    pools.pool_add_documents(scenario=scenario, external_ids=["d1", "d2"], added_by=alice)
    dealt = AssessorAssignment.objects.filter(pool_document__pool__scenario=scenario)
    assert dealt.count() == 2
    for assignment in dealt:
        assessors.assessor_judgment_record(
            assessor=assignment.assessor.user, pool_document=assignment.pool_document, grade=1
        )
    adjudication.adjudicate(study=assessed_study, preset="majority", decided_by=alice)
    assert methods(assessed_study) == {"d1": "single_assessor", "d2": "single_assessor", "d3": "agreed"}


def test_the_page_the_api_and_the_archive_say_single_assessor(client, assessed_study, make_assessors, alice):
    [ann] = make_assessors(assessed_study, "ann", per_document=1)
    grade_all(assessed_study, {"d1": [2], "d2": [0]}, [ann])
    client.force_login(alice)
    response = client.post(
        reverse("assessment:adjudicate", args=[assessed_study.slug]),
        {"adjudicate-preset": "2002"},
        follow=True,
    )
    [message] = [str(m) for m in response.context["messages"]]
    assert message.startswith("Decided: 2 single assessor (no second grade).")
    assert "agreed" not in message

    version = references.reference_version_publish(study=assessed_study, created_by=alice)
    api = client_for(alice).get(
        f"/api/studies/{assessed_study.pk}/reference-versions/{version.pk}/judgments/"
    )
    assert api.status_code == 200, api.content
    rows = api.json()["results"] if isinstance(api.json(), dict) else api.json()
    assert {row["source"] for row in rows} == {"adjudication v1 (single_assessor)"}
    [archived] = study_archive(study=assessed_study)["reference_versions"]
    assert {j["source"] for j in archived["judgments"]} == {"adjudication v1 (single_assessor)"}


@pytest.mark.django_db(transaction=True)
def test_the_migration_relabels_earlier_agreed_decisions_of_a_single_grade(
    assessed_study, make_assessors, alice
):
    ann, ben = make_assessors(assessed_study, "ann", "ben", per_document=2)
    grade_all(assessed_study, {"d1": [2, 2]}, [ann, ben])
    assessors.assessment_plan_set(study=assessed_study, assessors_per_document=1)
    grade_all(assessed_study, {"d2": [3]}, [ann], code="S2")
    adjudication.adjudicate(study=assessed_study, preset="2002", decided_by=alice)
    executor = MigrationExecutor(connection)
    [node] = [key for key in executor.loader.graph.nodes if key[1].endswith("_adjudication_single_assessor")]
    [parent] = [key for key in executor.loader.graph.node_map[node].parents if key[0] == "studies"]
    leaves = executor.loader.graph.leaf_nodes()
    try:
        MigrationExecutor(connection).migrate([parent])
        assert set(methods(assessed_study).values()) == {"agreed"}
    finally:
        MigrationExecutor(connection).migrate(leaves)
    assert methods(assessed_study) == {"d1": "agreed", "d2": "single_assessor"}
