"""A check's answer goes through THE form step (studies/participation/way/form_step.py) as every form does:
the same answer sent twice at once (two tabs) stores one event, and the one that loses the race answers the
winner's outcome instead of failing on the unique constraint."""

import pytest

from studies.models import Event, Participant
from studies.participation.recruitment.panels import recruitment_update
from studies.participation.way import check_answers
from studies.participation.way.check_answers import check_answer_record

from .conftest import cid, join, ready

pytestmark = pytest.mark.django_db

CHECKS = [
    {
        "name": "attention_1",
        "kind": "attention",
        "label": "Choose Blue.",
        "choices": ["Red", "Blue"],
        "answer": "Blue",
    }
]


def test_the_answer_that_loses_the_race_answers_the_winner_s_outcome(panel_study, monkeypatch):
    recruitment_update(study=panel_study, checks={"preset": "prolific", "items": CHECKS})
    participant = ready(join(panel_study).participant)
    event_id = cid()
    counted = check_answers.gold_failures
    other_tab = []

    def the_other_tab_first(someone):
        # Read inside the first request's check, after its lookup found nothing stored: the other tab's
        # request with the same id runs to the end in between.
        if not other_tab:
            other_tab.append(None)  # the other tab's own check passes through here once more
            other_tab[0] = check_answer_record(
                participant=Participant.objects.get(pk=participant.pk),
                name="attention_1",
                answer="Blue",
                client_event_id=event_id,
            )
        return counted(someone)

    monkeypatch.setattr(check_answers, "gold_failures", the_other_tab_first)
    late = check_answer_record(
        participant=participant, name="attention_1", answer="Red", client_event_id=event_id
    )
    assert late == other_tab[0] and late["passed"] is True
    assert Event.objects.filter(participant=participant, type="check").count() == 1
