"""A pilot plan resamples participants and scenarios by their codes, never by their database ids: the same
sessions give the same curve whatever ids the rows were given. The resampling draws by position among the
sorted labels, and ids sort as text ("10" before "9"), so with ids the demo's plan printed power 0.18 on one
machine and 0.20 on another (what the database had held before moved its ids across a power of ten)."""

import pytest

from scoring.planning import services
from scoring.planning.selectors import plan_curve
from studies.design import services as study_services
from studies.models import Collection, Document, Participant, Scenario
from tests.dashboards.conftest import build_study
from tests.factories import study_designed, study_scored

pytestmark = pytest.mark.django_db


def _pilot(study, capture):
    a, b = study.systems.order_by("id")
    with capture(execute=True):
        plan, _reused = services.power_plan_create(
            study=study, first_system=a, second_system=b, counts=[8], replications=400, effect="pilot"
        )
    plan.refresh_from_db()
    assert plan.status == "done", plan.error
    return plan


def _ids_across_a_power_of_ten(model, owner_study, count: int, make) -> None:
    """Create and delete rows until the next `count` ids of `model` straddle a power of ten."""
    following = (model.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1
    boundary = 10 ** len(str(following + count))
    filler = [make(owner_study, i) for i in range(boundary - count // 2 - following)]
    model.objects.filter(pk__in=[row.pk for row in filler]).delete()


def _twin(alice, capture):
    study = study_services.study_create(owner=alice, name="Twin", consent_text="Consent text.", status="open")
    _ids_across_a_power_of_ten(
        Scenario,
        study,
        4,
        lambda s, i: Scenario.objects.create(
            study=s, code=f"F{i}", title="filler", text="", topic_id=f"x{i}"
        ),
    )
    study_designed(study)
    collection = Collection.objects.create(name="Twin collection")
    Document.objects.bulk_create(
        Document(collection=collection, external_id=f"d{i}", title=f"Doc {i}") for i in range(30)
    )
    study.collection = collection
    study.save(update_fields=["collection"])
    _ids_across_a_power_of_ten(
        Participant,
        study,
        8,
        lambda s, i: Participant.objects.create(study=s, code=f"F{i}", enrolment_index=10_000 + i),
    )
    built = build_study(study, {doc.external_id: doc for doc in collection.documents.all()})
    study_scored(study, capture)
    return built.study


def test_the_same_sessions_under_other_ids_give_the_same_curve(
    scored, alice, django_capture_on_commit_callbacks
):
    built, _run = scored
    first = _pilot(built.study, django_capture_on_commit_callbacks)
    twin = _twin(alice, django_capture_on_commit_callbacks)
    scenario_ids = sorted(twin.scenarios.values_list("pk", flat=True))
    participant_ids = sorted(twin.participants.values_list("pk", flat=True))
    # The twin's ids do sort otherwise as text, so a plan labelled by ids would resample other rows.
    assert sorted(scenario_ids, key=str) != scenario_ids
    assert sorted(participant_ids, key=str) != participant_ids
    second = _pilot(twin, django_capture_on_commit_callbacks)
    assert second.sample["values"] == first.sample["values"]
    assert second.sample["participant"] == first.sample["participant"] == sorted(first.sample["participant"])
    assert [(p.n, p.power, p.low, p.high) for p in plan_curve(second).points] == [
        (p.n, p.power, p.low, p.high) for p in plan_curve(first).points
    ]
