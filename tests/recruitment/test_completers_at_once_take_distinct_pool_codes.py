"""Completers asking for their code at the same moment: each pool code goes to exactly one of them, and those
left over are told the pool ran out. PostgreSQL only (connections writing at once; on SQLite the conditional
UPDATE is proved by test_per_participant_and_pool_codes_are_handed_out_once.py)."""

import threading

import pytest
from django.db import connection, connections

from studies.models import CompletionCode
from studies.participation.recruitment.codes import completion_pool_add
from studies.participation.recruitment.completion import completion_of
from studies.participation.recruitment.panels import recruitment_update
from studies.participation.recruitment.states import participant_visit

from .conftest import finish, join

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs connections writing at once: PostgreSQL (CI's second pass)",
    ),
]


def test_six_completers_at_once_share_four_pool_codes(panel_study):
    recruitment_update(study=panel_study, panel="generic", code_mode="pool")
    completion_pool_add(study=panel_study, text="P1\nP2\nP3\nP4")
    people = []
    for n in range(6):
        person = finish(join(panel_study, f"w-{n}").participant)
        participant_visit(participant=person)
        people.append(person)
    barrier, codes, errors = threading.Barrier(len(people)), [], []

    def ask(person):
        try:
            barrier.wait(timeout=10)
            codes.append(completion_of(person).code)
        except Exception as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=ask, args=(person,)) for person in people]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    assert sorted(codes) == ["", "", "P1", "P2", "P3", "P4"]
    held = CompletionCode.objects.filter(study=panel_study, participant__isnull=False)
    assert held.count() == 4 and len(set(held.values_list("participant_id", flat=True))) == 4
