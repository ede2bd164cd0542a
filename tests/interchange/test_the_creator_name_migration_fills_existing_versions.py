"""Migration 0028 added ReferenceVersion.created_by_name and ReferenceJudgment.judged_by_name and
filled them for the rows already stored, from their linked account, so the names outlive the accounts from
then on. Run backwards to before it and forwards again over versions with and without a creator, and a
judgment with a judge."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from studies.assessment.references import reference_version_create, reference_version_import_qrels
from studies.models import ReferenceJudgment, ReferenceVersion

pytestmark = pytest.mark.django_db(transaction=True)


def _migrate(targets):
    MigrationExecutor(connection).migrate(targets)


def test_the_migration_names_each_linked_creator(worked_study, alice):
    reference_version_import_qrels(study=worked_study, lines=["1 0 d1 2"], path="a.qrels", created_by=alice)
    reference_version_import_qrels(study=worked_study, lines=["1 0 d1 3"], path="b.qrels", created_by=None)
    d2 = worked_study.collection.documents.get(external_id="d2")
    reference_version_create(
        study=worked_study, judgments=[ReferenceJudgment(topic_id="1", document=d2, grade=1, judged_by=alice)]
    )
    graph = MigrationExecutor(connection).loader.graph
    [node] = [
        key
        for key in graph.nodes
        if key[0] == "studies" and key[1].endswith("_reference_version_creator_name")
    ]
    [parent] = [key for key in graph.node_map[node].parents if key[0] == "studies"]
    leaves = graph.leaf_nodes()
    try:
        _migrate([parent])
        with connection.cursor() as cursor:
            columns = [
                c.name
                for c in connection.introspection.get_table_description(cursor, "studies_referenceversion")
            ]
        assert "created_by_name" not in columns
        _migrate(leaves)
    finally:
        _migrate(leaves)
    names = list(
        ReferenceVersion.objects.filter(study=worked_study)
        .order_by("number")
        .values_list("created_by_name", flat=True)
    )
    assert names == ["alice", None, None]
    judges = ReferenceJudgment.objects.filter(version__study=worked_study).values_list(
        "judged_by_name", flat=True
    )
    assert set(judges) == {None, "alice"}
