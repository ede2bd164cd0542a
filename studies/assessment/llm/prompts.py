"""The prompt an LLM assessor sends, the grade it reads back, and how that grade lands on the study's scale.

The default template is UMBRELA's zero-shot "bing" prompt (Upadhyay et al. 2024, castorini/umbrela,
src/umbrela/prompts/qrel_zeroshot_bing.txt), their reproduction of the prompt of Thomas et al. (SIGIR 2024):
grades 0-3, the answer ending "##final score: N". Placeholders: {query} (the scenario's title), {passage}
(the document's title and text, cut to the assessor's passage length), {description} and {narrative} (the
scenario's text: a study has one text per scenario, where TREC topics have two)."""

from __future__ import annotations

import hashlib
import re
import string
from dataclasses import dataclass

from studies.errors import AssessmentError

PLACEHOLDERS = ("query", "passage", "description", "narrative")
MODEL_GRADES = (0, 1, 2, 3)

# Verbatim, trailing spaces included (they are part of the prompt the paper's figures were made with).
UMBRELA_PROMPT = (
    "Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the following "
    "meanings:\n"
    "0 = represent that the passage has nothing to do with the query, \n"
    "1 = represents that the passage seems related to the query but does not answer it, \n"
    "2 = represents that the passage has some answer for the query, but the answer may be a bit unclear, or "
    "hidden amongst extraneous information and \n"
    "3 = represents that the passage is dedicated to the query and contains the exact answer.\n"
    "\n"
    "Important Instruction: Assign category 1 if the passage is somewhat related to the topic but not "
    "completely, category 2 if passage presents something very important related to the entire topic but "
    "also has some extra information and category 3 if the passage only and entirely refers to the topic. If "
    "none of the above satisfies give it category 0.\n"
    "\n"
    "Query: {query}\n"
    "Passage: {passage}\n"
    "\n"
    "Split this problem into steps:\n"
    "Consider the underlying intent of the search.\n"
    "Measure how well the content matches a likely intent of the query (M).\n"
    "Measure how trustworthy the passage is (T).\n"
    "Consider the aspects above and the relative importance of each, and decide on a final score (O). Final "
    "score must be an integer value only.\n"
    "Do not provide any code in result. Provide each score in the format of: ##final score: score without "
    "providing any reasoning."
)

FINAL_SCORE = re.compile(r"##\s*final\s+score\s*:\s*(-?\d+)", re.IGNORECASE)


def template_check(template: str) -> None:
    """Refuse a template that names a placeholder other than PLACEHOLDERS (naming it), uses a conversion or
    format spec, or has an unmatched brace; or that leaves out {passage}, without which nothing is judged."""
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError as error:
        raise AssessmentError(f"prompt template: {error} (write a literal brace as {{{{ or }}}})") from None
    names = set()
    for _literal, name, spec, conversion in fields:
        if name is None:
            continue
        if name not in PLACEHOLDERS:
            known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
            raise AssessmentError(
                f"prompt template: unknown placeholder {{{name}}}; the known ones are {known}"
            )
        if spec or conversion:
            raise AssessmentError(f"prompt template: {{{name}}} takes no format or conversion")
        names.add(name)
    if "passage" not in names:
        raise AssessmentError("prompt template: it must contain {passage}, the document to judge")


def prompt_hash(template: str, model_name: str) -> str:
    """sha256 of the template's source and the model: what a reference version's provenance and every kept
    request name, so two runs with the same hash asked the same model the same way."""
    return hashlib.sha256(f"{template}\n\x00model={model_name}".encode()).hexdigest()


# A "##final score" the document itself holds, defanged in the prompt ("# #final score"): a model that echoes
# the passage then echoes no score, and a document cannot write its own grade (docs/assessing.md).
QUOTED_SCORE = re.compile(r"#(?=#\s*final\s+score)", re.IGNORECASE)


def passage_text(title: str, text: str, max_chars: int) -> str:
    passage = f"{title}\n{text}".strip() if title else text.strip()
    return QUOTED_SCORE.sub("# ", passage[:max_chars])


def prompt_render(template: str, *, query: str, passage: str, description: str, narrative: str) -> str:
    template_check(template)
    return template.format(query=query, passage=passage, description=description, narrative=narrative)


def grade_parse(answer: str) -> int | None:
    """The model's grade (docs/assessing.md, "The grade rule"): every "##final score: N" in the answer must
    name the same N, from 0 to 3; two different scores, or none, or one outside 0-3, and the answer is
    malformed (None: no grade is stored). So a passage that quotes "##final score: 3" and is echoed back
    cannot outvote the model's own verdict: it makes the answer malformed, never graded 3."""
    found = {int(n) for n in FINAL_SCORE.findall(answer or "")}
    if len(found) != 1:
        return None
    (grade,) = found
    return grade if grade in MODEL_GRADES else None


@dataclass(frozen=True)
class GradeMap:
    """The model's grades 0-3 onto the study's scale, as {model grade: study grade}."""

    mapping: dict[int, int]

    def as_json(self) -> dict[str, int]:
        return {str(k): v for k, v in self.mapping.items()}

    @classmethod
    def from_json(cls, data: dict) -> GradeMap:
        return cls({int(k): int(v) for k, v in data.items()})


def grade_map_for(scale: list[int]) -> GradeMap:
    """The map for a study's grade values. The non-negative grades count (a negative grade, such as TREC's -2
    for spam, is not one the prompt offers): four of them take 0-3 in order; two of them are binary, with
    0-1 below and 2-3 above (relevant from 2, as UMBRELA's and TREC's binarisation). Any other scale is
    refused: no map of it would be the prompt's meaning."""
    usable = sorted(value for value in scale if value >= 0)
    if len(usable) == 4:
        return GradeMap(dict(zip(MODEL_GRADES, usable, strict=True)))
    if len(usable) == 2:
        low, high = usable
        return GradeMap({0: low, 1: low, 2: high, 3: high})
    raise AssessmentError(
        f"the study's grade scale {sorted(scale)} has {len(usable)} non-negative grades; a language-model "
        "assessor grades 0-3 and maps onto a scale of four (0-3 in order) or two (0-1 low, 2-3 high) grades"
    )
