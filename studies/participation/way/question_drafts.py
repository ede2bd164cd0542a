"""A questionnaire's pages answered so far, kept across a reload.

The pages before the last store nothing in the study (studies/questionnaires/pages.py): each page carries the
others' answers in hidden fields, so a reload, or a browser that dropped the POST, showed page 1 again, empty.
So "Next" also keeps the answers so far and the page reached in the participant's browser session (Django's
session, which every web node reads from the database); the questionnaire's page shows that page with them,
and saving the questionnaire forgets them. Only the questionnaire's own fields are kept, each cut to
MAX_CHARS: the last page's save checks every answer again, as it always did."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from studies.questionnaires.pages import QuestionPage, field_names, question_page

MAX_CHARS = 2000  # per kept answer: a hostile form cannot fill the session table


def draft_key(participant, step) -> str:
    """One draft per participant, questionnaire and task (the questions before and after each task are asked
    once per task)."""
    task = step.assignment.pk if step.assignment is not None else 0
    return f"question-draft:{participant.pk}:{step.kind}:{task}"


def draft_keep(session, key: str, items: Sequence[Mapping], data: Mapping, page: int) -> None:
    names = {name for item in items for name in field_names(item)}
    answers = {
        name: str(data.get(name))[:MAX_CHARS] for name in sorted(names) if data.get(name) not in (None, "")
    }
    session[key] = {"page": page, "answers": answers}


def draft_page(session, key: str, items: Sequence[Mapping]) -> QuestionPage | None:
    """The page reached with the answers kept, or None without a draft (the first page, empty)."""
    draft = session.get(key)
    if not isinstance(draft, dict):
        return None
    page, answers = draft.get("page"), draft.get("answers")
    if not isinstance(page, int) or not isinstance(answers, dict):
        return None
    return question_page(items, answers, {}, page)


def draft_forget(session, key: str) -> None:
    session.pop(key, None)


def drafts_forget(session, participant) -> None:
    """Every draft of the participant in this browser: their withdrawal keeps none of their answers."""
    for key in [k for k in session.keys() if k.startswith(f"question-draft:{participant.pk}:")]:
        session.pop(key, None)
