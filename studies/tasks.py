"""Celery tasks: they take ids, call a service, and are idempotent (so acks_late is safe)."""

from celery import shared_task

from studies.models import Collection, Scenario
from studies.search.systems import collection_index_build


@shared_task(name="studies.tasks.collection_index_build_task", acks_late=True)
def collection_index_build_task(collection_id: int, configuration: str) -> int:
    """Build the index of one collection for one configuration; returns the number of documents indexed.
    Queue it with `transaction.on_commit(lambda: collection_index_build_task.delay(pk, name))`."""
    collection = Collection.objects.get(pk=collection_id)
    return collection_index_build(collection=collection, configuration=configuration)


@shared_task(name="studies.tasks.assessment_pools_grow_task", acks_late=True)
def assessment_pools_grow_task(study_id: int, scenario_id: int) -> int:
    """Grow the scenario's assessment pool with what new sessions brought (a pool_build is idempotent).
    Only pools a researcher has built grow by themselves; returns the number of documents added."""
    from studies.assessment.services import pool_build

    scenario = Scenario.objects.select_related("study").filter(pk=scenario_id, study_id=study_id,
                                                                 assessment_pool__isnull=False).first()
    if scenario is None:
        return 0
    changes = pool_build(study=scenario.study, scenarios=[scenario])
    return sum(change.added for change in changes.values())
