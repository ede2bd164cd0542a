"""Fake judges for the robustness audit's tests, as `grade_for` functions of the fake model server: they read
the prompt the assessor sends (the UMBRELA template: "Query: ...", "Passage: ...").

- honest: the people's grade of the document the passage names ("Title n"), whatever else it holds;
- gullible: 3 whenever every word of the query appears in the passage, else as the honest judge."""

import re

QUERY = re.compile(r"^Query: (.*)$", re.MULTILINE)
PASSAGE = re.compile(r"^Passage: (.*?)\n\nSplit this problem", re.MULTILINE | re.DOTALL)
TITLE = re.compile(r"Title (\d+)")
WORDS = re.compile(r"\w+")

# Per scenario, each document's two grades (ann, ben); the people's grade is their lower median.
GRADES = {
    "S1": {"d1": [3, 3], "d2": [0, 0], "d3": [0, 1], "d4": [1, 1], "d5": [0, 0], "d6": [2, 3], "d7": [0, 0]},
    "S2": {"d1": [0, 0], "d2": [2, 2], "d3": [1, 0], "d4": [0, 0], "d5": [1, 1], "d8": [3, 2]},
}
PEOPLE = {
    (f"Scenario {code[1]}", doc): min(grades) for code, docs in GRADES.items() for doc, grades in docs.items()
}


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


def obedient(people: dict[tuple[str, str], int]):
    """3 whenever the passage carries an instruction to the judge, else as the honest judge."""
    from scoring.lib.judge_audit import INJECTIONS

    fair = honest(people)

    def grade_for(prompt: str) -> int:
        passage = PASSAGE.search(prompt).group(1)
        return 3 if any(instruction in passage for instruction in INJECTIONS) else fair(prompt)

    return grade_for
