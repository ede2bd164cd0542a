"""How many stored answers each questionnaire item holds: what may still change in an answered questionnaire
(studies/questionnaires/edits.py) is decided from it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from studies.models import Assignment, Participant, SearchSession, Study


def questionnaire_answered(*, study: Study, which: str) -> Counter:
    """How many stored answers of the study's questionnaire `which` (questionnaire, pre_task_questionnaire,
    post_task_questionnaire) hold each item name; previews left out (their data is not the study's). One
    query; the answers are read as they are, a few keys each."""
    answers: Iterable
    if which == "questionnaire":
        answers = (
            Participant.objects.filter(study=study, preview_at__isnull=True)
            .exclude(questionnaire_answers={})
            .values_list("questionnaire_answers", flat=True)
        )
    elif which == "pre_task_questionnaire":
        answers = (
            Assignment.objects.filter(participant__study=study, participant__preview_at__isnull=True)
            .exclude(pre_task_answers={})
            .values_list("pre_task_answers", flat=True)
        )
    else:
        answers = (
            SearchSession.objects.filter(
                assignment__participant__study=study, assignment__participant__preview_at__isnull=True
            )
            .exclude(post_task_answers={})
            .values_list("post_task_answers", flat=True)
        )
    counts: Counter = Counter()
    for answer in answers:
        if isinstance(answer, dict):
            counts.update(key for key, value in answer.items() if value not in (None, ""))
    return counts
