"""Fake judges for the robustness audit's tests, as `grade_for` functions of the fake model server: they read
the prompt the assessor sends (the UMBRELA template: "Query: ...", "Passage: ...").

- honest: the people's grade of the document the passage names ("Title n"), whatever else it holds;
- gullible: 3 whenever every word of the query appears in the passage, else as the honest judge."""

import re

QUERY = re.compile(r"^Query: (.*)$", re.MULTILINE)
PASSAGE = re.compile(r"^Passage: (.*?)\n\nSplit this problem", re.MULTILINE | re.DOTALL)
TITLE = re.compile(r"Title (\d+)")
WORDS = re.compile(r"\w+")


def honest(people: dict[tuple[str, str], int]):
    """people: {(query, external id): grade}."""

    def grade_for(prompt: str) -> int:
        query = QUERY.search(prompt).group(1)
        passage = PASSAGE.search(prompt).group(1)
        return people[(query, f"d{TITLE.search(passage).group(1)}")]

    return grade_for


def gullible(people: dict[tuple[str, str], int]):
    fair = honest(people)

    def grade_for(prompt: str) -> int:
        query = QUERY.search(prompt).group(1)
        passage = PASSAGE.search(prompt).group(1)
        words = {word.casefold() for word in WORDS.findall(passage)}
        if all(word.casefold() in words for word in WORDS.findall(query)):
            return 3
        return fair(prompt)

    return grade_for
