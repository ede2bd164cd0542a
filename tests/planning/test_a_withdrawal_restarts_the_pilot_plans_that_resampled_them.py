"""A pilot power plan stores the sessions it resamples (values and participant codes) and the curve computed
from them: after a participant withdraws, a plan that resampled their sessions is cleared at once (no stored
figure includes them) and computed again on what its run holds now; a plan that did not resample them is
left alone; the withdrawal's audit row names the plans."""

import pytest

from scoring.models import PowerChunk, PowerPlan
from scoring.planning import services, simulate
from studies.models import AuditEntry
from studies.participation.way.steps import participant_withdraw

pytestmark = pytest.mark.django_db


def _pilot(study, capture, **overrides):
    a, b = study.systems.order_by("id")
    options = {"first_system": a, "second_system": b, "counts": [8], "replications": 250, "effect": "pilot"}
    with capture(execute=True):
        plan, _reused = services.power_plan_create(study=study, **{**options, **overrides})
    plan.refresh_from_db()
    assert plan.status == "done", plan.error
    return plan


def test_the_plans_resampling_them_are_computed_again_without_them(
    scored, django_capture_on_commit_callbacks
):
    built, _run = scored
    study = built.study
    code = built.sessions[0]["participant"]
    participant = study.participants.get(code=code)
    pilot = _pilot(study, django_capture_on_commit_callbacks)
    specified = _pilot(
        study, django_capture_on_commit_callbacks, effect="specified", difference=0.1, spread=0.2
    )
    assert len(pilot.sample["values"]) == 32 and code in pilot.sample["participant"]
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        participant_withdraw(participant=participant)
        cleared = PowerPlan.objects.get(pk=pilot.pk)
        assert (cleared.status, cleared.sample, PowerChunk.objects.filter(plan=pilot).count()) == (
            "pending",
            {},
            0,
        )
    for callback in callbacks:
        callback()
    pilot.refresh_from_db()
    assert pilot.status == "done", pilot.error
    assert len(pilot.sample["values"]) == 28 and code not in pilot.sample["participant"]
    assert pilot.sample["description"]["participants"] == 7
    assert PowerChunk.objects.filter(plan=pilot).count() == 1
    specified.refresh_from_db()
    assert specified.status == "done" and specified.finished_at is not None
    entry = AuditEntry.objects.get(action="participant_withdrawn")
    assert entry.detail["scores"]["power_plans"] == [pilot.pk]


def test_a_simulated_plans_comparison_with_the_real_sessions_is_computed_again(
    scored, django_capture_on_commit_callbacks
):
    """A simulated plan resamples its simulated searchers, not the participants, but compares them with the
    real sessions and the real pilot: those figures are computed again without the withdrawn sessions."""
    built, _run = scored
    study = built.study
    a, b = study.systems.order_by("id")
    real = simulate.real_behaviour(study)
    plan = PowerPlan.objects.create(
        study=study,
        effect=PowerPlan.Effect.SIMULATED,
        first_system=a,
        second_system=b,
        counts=[8],
        key="simulated",
        status=PowerPlan.Status.DONE,
        sample={"values": [0.5], "calibration": {"simulated": {"kept": 1}, "real": real}, "pilot": None},
    )
    participant = study.participants.get(code=built.sessions[0]["participant"])
    with django_capture_on_commit_callbacks(execute=True):
        participant_withdraw(participant=participant)
    plan.refresh_from_db()
    assert plan.sample["values"] == [0.5] and plan.sample["calibration"]["simulated"] == {"kept": 1}
    assert plan.sample["pilot"]["participants"] == 7 and plan.sample["pilot"]["sessions"] == 28
    assert plan.sample["calibration"]["real"] == simulate.real_behaviour(study) != real
    assert plan.status == "done"
