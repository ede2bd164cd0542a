"""A design change and an enrolment at the same moment: both lock the study row (design_check_unlocked and
participants_enrol), so the change waits for the enrolment to commit and is then refused, instead of both
passing the check and a third system joining a plan already built from two. PostgreSQL only: SQLite
serialises writers on its own."""

import threading

import pytest
from django.db import connection, connections, transaction

from studies.design import services

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs two connections writing at once: PostgreSQL (CI's second pass)",
    ),
]


def _enrol_and_hold(study, enrolled: threading.Event, release: threading.Event, errors: list):
    try:
        with transaction.atomic():
            services.participants_enrol(study=study, count=2)
            enrolled.set()
            release.wait(timeout=10)  # not committed yet: the design is locked only inside this transaction
    except Exception as exc:  # noqa: BLE001 (reported by the test)
        errors.append(exc)
    finally:
        connections.close_all()


@pytest.mark.parametrize(
    "change", ["system_add", "scenario_add", "design_row_update", "design_row_delete", "study_design_set"]
)
def test_a_change_racing_an_enrolment_waits_for_it_and_is_refused(designed_study, change):
    enrolled, release, errors = threading.Event(), threading.Event(), []
    enrolment = threading.Thread(target=_enrol_and_hold, args=(designed_study, enrolled, release, errors))
    enrolment.start()
    assert enrolled.wait(timeout=10)
    # Commit the enrolment a moment after the change has started waiting for the study row.
    threading.Timer(0.5, release.set).start()
    row = designed_study.systems.order_by("id").last()
    calls = {
        "system_add": lambda: services.system_add(study=designed_study, code="C", name="Third"),
        "scenario_add": lambda: services.scenario_add(
            study=designed_study, code="S9", title="9", text="9", topic_id="9"
        ),
        "design_row_update": lambda: services.design_row_update(
            study=designed_study, row=row, name="Renamed"
        ),
        "design_row_delete": lambda: services.design_row_delete(study=designed_study, row=row),
        "study_design_set": lambda: services.study_design_set(study=designed_study, design="between"),
    }
    try:
        with pytest.raises(services.DesignLockedError):
            calls[change]()
    finally:
        release.set()
        enrolment.join(timeout=30)
    assert not errors
    assert designed_study.participants.count() == 2
    assert designed_study.systems.count() == 2 and designed_study.scenarios.count() == 4
    assert designed_study.systems.get(pk=row.pk).name == "System B"
    designed_study.refresh_from_db()
    assert designed_study.design is None  # the participants' orders were built within-subject
