"""A practice task is never scored, so its documents are not pooled: the pool rules skip it, and
adding documents to it by hand or from a qrels file is refused, naming the field or the file's line."""

import pytest

from scoring.lib.errors import InputError
from studies.assessment import pools
from studies.errors import AssessmentError
from studies.models import AssessmentPool, PoolDocument

from .conftest import pool_ids

pytestmark = pytest.mark.django_db


def test_the_pool_rules_skip_the_practice_task(practice_study):
    changes = pools.pool_build(study=practice_study, rule="union")
    assert "P" not in changes and set(changes) == {"S1", "S2", "S3", "S4"}
    assert not AssessmentPool.objects.filter(scenario__code="P").exists()
    assert pool_ids(practice_study, "S1") == {"d1"}
    assert not PoolDocument.objects.filter(document__external_id="d9").exists()


def test_the_practice_task_named_is_skipped_too(practice_study):
    scenarios = list(practice_study.scenarios.filter(code__in=["P", "S1"]))
    assert set(pools.pool_build(study=practice_study, scenarios=scenarios)) == {"S1"}


def test_documents_added_by_hand_are_refused(practice_study, alice):
    with pytest.raises(AssessmentError, match="scenario: P is a practice task: never scored"):
        pools.pool_add_documents(
            scenario=practice_study.scenarios.get(code="P"), external_ids=["d9"], added_by=alice
        )
    assert not PoolDocument.objects.exists()


def test_a_qrels_line_of_the_practice_topic_is_refused_with_its_line(practice_study, alice):
    with pytest.raises(InputError, match=r"pool\.qrels:2: topic '9' is a practice task's"):
        pools.pool_import_qrels(
            study=practice_study, lines=["1 0 d1 1", "9 0 d9 2"], path="pool.qrels", added_by=alice
        )
    assert not PoolDocument.objects.exists()  # all or nothing: S1's line is not kept either
