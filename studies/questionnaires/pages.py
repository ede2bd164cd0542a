"""A questionnaire shown one page at a time (an item with "new_page" starts one:
studies/questionnaires/items.py).

Nothing is stored before the last page: each page's form carries the answers of the others as hidden fields,
and "Next" checks the pages answered so far (answers_clean), so a refused page shows again with its messages
and every earlier answer kept. The last page saves the whole questionnaire through its service, which checks
every item again; a refusal there shows the first page with a message. The participant's pages and the set-up
page's preview both use `question_page`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from studies.errors import InvalidAnswers
from studies.questionnaires.answers import answers_clean
from studies.questionnaires.items import OTHER, OTHER_SUFFIX, item_pages


@dataclass(frozen=True)
class QuestionPage:
    """What a question page's template shows: `items` (form rows), the hidden `carried` answers of the other
    pages, its `number` (1-based) of `total`."""

    items: list[dict]
    number: int = 1
    total: int = 1
    carried: list[tuple[str, str]] = field(default_factory=list)

    @property
    def last(self) -> bool:
        return self.number >= self.total


def form_items(items: Sequence[Mapping], answers: Mapping, errors: Mapping) -> list[dict]:
    """Items ready for the template: the value given so far, the error, the options of a scale or a choice,
    a scale's anchors, a choice's other text."""
    rows = []
    for item in items:
        name = item["name"]
        row = {**item, "value": answers.get(name, ""), "error": errors.get(name, "")}
        if item.get("kind") == "scale":
            row["options"] = [str(v) for v in range(int(item.get("min", 1)), int(item.get("max", 5)) + 1)]
        elif item.get("kind") == "choice":
            row["options"] = [str(c) for c in item.get("choices", [])]
            if item.get("other") is True:
                row["other_value"] = OTHER
                row["other_field"] = f"{name}{OTHER_SUFFIX}"
                row["other_text"] = answers.get(f"{name}{OTHER_SUFFIX}", "")
        rows.append(row)
    return rows


def field_names(item: Mapping) -> list[str]:
    """The form fields an item answers in: its name, and its "other" text when it has one."""
    return [item["name"], f"{item['name']}{OTHER_SUFFIX}"] if item.get("other") is True else [item["name"]]


def page_number(data: Mapping, total: int) -> int:
    """The page a form says it was (1-based); the last page when it says none (the API, the simulated
    searchers, a form from before pages: all items at once)."""
    try:
        number = int(str(data.get("page", "")))
    except ValueError:
        return total
    return min(max(number, 1), total)


def question_page(items: Sequence[Mapping], answers: Mapping, errors: Mapping, number: int) -> QuestionPage:
    """Page `number` (1-based, clamped) of `items` with these answers and messages."""
    pages = item_pages([dict(item) for item in items]) or [[]]
    number = min(max(number, 1), len(pages))
    shown = {item["name"] for item in pages[number - 1]}
    carried = [
        (key, str(answers.get(key)))
        for item in items
        if item["name"] not in shown
        for key in field_names(item)
        if answers.get(key) not in (None, "")
    ]
    return QuestionPage(form_items(pages[number - 1], answers, errors), number, len(pages), carried)


def first_page_with(items: Sequence[Mapping], errors: Mapping) -> int:
    """The first page (1-based) holding an item with a message; 1 when none does."""
    for number, page in enumerate(item_pages([dict(item) for item in items]), start=1):
        if any(item["name"] in errors for item in page):
            return number
    return 1


def page_next(items: Sequence[Mapping], data: Mapping) -> QuestionPage | None:
    """After a page's "Next": the next page, or the first refused page with its messages; None when the form
    was the last page (save the questionnaire)."""
    pages = item_pages([dict(item) for item in items])
    number = page_number(data, len(pages))
    if number >= len(pages):
        return None
    answered = [item for page in pages[:number] for item in page]
    try:
        answers_clean(answered, data)
    except InvalidAnswers as invalid:
        return question_page(items, data, invalid.errors, first_page_with(items, invalid.errors))
    return question_page(items, data, {}, number + 1)
