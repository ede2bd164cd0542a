"""The set-up checklist's questionnaire step names all three moments a participant is asked: before the first
task, before each task (none unless the researcher adds one) and after each task, with counts in words."""

import pytest

from studies.design import services
from studies.design.checklist import study_checklist

pytestmark = pytest.mark.django_db

ITEM = {"name": "ready", "label": "Ready?", "kind": "choice", "choices": ["yes", "no"]}


def _summary(study) -> str:
    (step,) = [s for s in study_checklist(study=study) if s.key == "questionnaires"]
    return step.summary


def test_the_questionnaire_step_names_the_one_before_each_task(alice):
    study = services.study_create(owner=alice, name="Asked before each task", consent_text="Consent.")
    assert "before each task: none" in _summary(study)
    study.pre_task_questionnaire = [ITEM]
    study.save(update_fields=["pre_task_questionnaire"])
    summary = _summary(study)
    assert "before each task: 1 item;" in summary, summary
    assert "Before the first task:" in summary and "after each task:" in summary
    assert "1 items" not in summary
