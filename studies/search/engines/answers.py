"""Generated answers, as plain Python (no Django, no I/O): the offline extractive answerer, the prompt a
retrieval-augmented model is given, citations read back out of an answer, a chat completion's content and the
lab's RAG service's JSON (docs/generative-systems.md) read, and an answer checked against the collection.

A citation is a marker in the answer's text: `[2]` (the second passage given, numbered from 1), `[1, 3]`, or
`[doc-id]` (a passage's document id). A marker that names no passage given is refused on its own (the answer
keeps its text; `Answer.refused` says why), never the whole answer.
"""

from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass, field

__all__ = [
    "Answer",
    "AnswerRefused",
    "Citation",
    "Passage",
    "answer_checked",
    "chat_content",
    "citations_parse",
    "extractive_answer",
    "prompt_build",
    "prompt_check",
    "service_answer_parse",
    "sentences",
]

ANSWER_MAX_CHARS = 8000  # a longer answer is refused (a participant reads it on one page)
FOLLOW_UP_MAX_CHARS = 300
FOLLOW_UPS_MAX = 5
IDS_MAX = 100  # retrieved or cited ids a service may name
ID_MAX_CHARS = 200  # Document.external_id's length
SENTENCE_MAX_CHARS = 400
EXTRACTIVE_SENTENCES = 3
PLACEHOLDERS = ("query", "passages", "history")
NO_ANSWER = "The documents found do not answer this question."

DEFAULT_PROMPT = """Answer the question using only the numbered passages below. After each sentence, cite \
the passages it comes from by their number in square brackets, e.g. [1] or [2, 3]. If the passages do not \
answer the question, say so.

{history}Passages:
{passages}

Question: {query}
Answer:"""

# A marker: [2], [1, 3], [1][2], [doc-id]; inside, numbers or ids (letters, digits, ._:/-), comma-separated.
MARKER = re.compile(r"\[([\w.:/-]{1,200}(?:\s*,\s*[\w.:/-]{1,200}){0,9})\]")
WORD = re.compile(r"\w+", re.UNICODE)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
STOPWORDS = frozenset(
    "a an and are as at be by do does for from how in is it of on or that the this to was what when where "
    "which who why with".split()
)


class AnswerRefused(ValueError):
    """An answer that cannot be shown: `category` is all a researcher or participant is shown."""

    def __init__(self, category: str, detail: str = ""):
        super().__init__(detail or category)
        self.category = category
        self.detail = detail or category


@dataclass(frozen=True)
class Passage:
    doc_id: str
    title: str
    text: str


@dataclass(frozen=True)
class Citation:
    doc_id: str
    start: int | None  # the marker's place in the answer text (characters); None: cited, not marked
    end: int | None
    marker: str = ""


@dataclass
class Answer:
    text: str
    citations: list[Citation] = field(default_factory=list)
    retrieved: list[str] = field(default_factory=list)
    follow_ups: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # each item left out, with why
    model: str = ""
    tokens_in: int = 0
    tokens_out: int = 0

    @property
    def cited(self) -> list[str]:
        """The cited documents, once each, in the order first cited."""
        return list(dict.fromkeys(c.doc_id for c in self.citations))

    def as_json(self) -> dict:
        return {
            "text": self.text,
            "citations": [
                {"doc": c.doc_id, "start": c.start, "end": c.end, "marker": c.marker} for c in self.citations
            ],
            "cited": self.cited,
            "retrieved": self.retrieved,
            "follow_ups": self.follow_ups,
            "refused": self.refused,
        }


# --- the offline answerer --------------------------------------------------------------------------------


def sentences(text: str) -> list[str]:
    """`text` cut into sentences (at . ! or ? followed by a space and a capital or digit), each at most
    SENTENCE_MAX_CHARS (a longer one is cut at a word)."""
    out = []
    for raw in SENTENCE_END.split(" ".join(text.split())):
        sentence = raw.strip()
        if not sentence:
            continue
        if len(sentence) > SENTENCE_MAX_CHARS:
            sentence = sentence[:SENTENCE_MAX_CHARS].rsplit(" ", 1)[0] + "…"
        out.append(sentence)
    return out


def _terms(text: str) -> set[str]:
    return {w for w in (m.lower() for m in WORD.findall(text)) if w not in STOPWORDS and len(w) > 1}


def extractive_answer(query: str, passages: list[Passage], *, most: int = EXTRACTIVE_SENTENCES) -> Answer:
    """The sentences of `passages` that share the most terms with `query` (at most `most`, at most two of a
    passage), in the passages' order, each followed by its passage's number: deterministic, no model. A query
    that shares no term with any sentence is answered NO_ANSWER, citing nothing."""
    wanted = _terms(query)
    scored = []
    for p_index, passage in enumerate(passages):
        for s_index, sentence in enumerate(sentences(passage.text)):
            overlap = len(wanted & _terms(sentence))
            if overlap:
                scored.append((-overlap, p_index, s_index, sentence))
    scored.sort()
    chosen: list[tuple[int, int, str]] = []
    per_passage: dict[int, int] = {}
    for _score, p_index, s_index, sentence in scored:
        if len(chosen) >= most:
            break
        if per_passage.get(p_index, 0) >= 2:
            continue
        per_passage[p_index] = per_passage.get(p_index, 0) + 1
        chosen.append((p_index, s_index, sentence))
    retrieved = [p.doc_id for p in passages]
    if not chosen:
        return Answer(NO_ANSWER, retrieved=retrieved, model="extractive")
    text, citations = "", []
    for p_index, _s_index, sentence in sorted(chosen):
        if text:
            text += " "
        text += sentence
        marker = f"[{p_index + 1}]"
        start = len(text) + 1
        text += " " + marker
        citations.append(Citation(passages[p_index].doc_id, start, start + len(marker), marker))
    return Answer(text, citations, retrieved, model="extractive")


# --- the prompt and the model's answer -------------------------------------------------------------------


def prompt_check(template: str) -> None:
    """Raises AnswerRefused naming the problem: placeholders other than PLACEHOLDERS, or no {query} or no
    {passages}. Literal braces are doubled."""
    names = set()
    try:
        for _literal, name, spec, conversion in string.Formatter().parse(template):
            if name is not None:
                if name not in PLACEHOLDERS or spec or conversion:
                    raise AnswerRefused(f"unknown placeholder {{{name}}} (allowed: query, passages, history)")
                names.add(name)
    except ValueError as error:
        raise AnswerRefused(f"not a template: {error} (write a literal brace twice)") from None
    for needed in ("query", "passages"):
        if needed not in names:
            raise AnswerRefused(f"the prompt has no {{{needed}}}")


def prompt_build(
    template: str, query: str, passages: list[Passage], history: list[tuple[str, str]] | None = None
) -> str:
    """The prompt: passages numbered from 1 with their document ids, and earlier turns (question, answer)."""
    listed = "\n\n".join(
        f"[{n}] (document {p.doc_id}) {p.title}\n{p.text}".rstrip() for n, p in enumerate(passages, 1)
    )
    earlier = "".join(f"Earlier question: {q}\nEarlier answer: {a}\n\n" for q, a in history or [])
    return template.format(query=query, passages=listed, history=earlier)


def citations_parse(text: str, passages: list[Passage] | list[str]) -> tuple[list[Citation], list[str]]:
    """The citations of `text` against the passages given (or their ids, in order), and a reason for each
    marker item that names none of them. A number cites that passage; anything else cites the passage of that
    document id (a number up to the passages' count is always a passage's number: Cranfield's ids are
    numbers too). A bracketed word that is neither (`[sic]`) is refused like a wrong number."""
    ids = [p.doc_id if isinstance(p, Passage) else p for p in passages]
    known = set(ids)
    citations, refused = [], []
    for match in MARKER.finditer(text):
        for item in (part.strip() for part in match.group(1).split(",")):
            number = int(item) if item.isascii() and item.isdigit() and len(item) <= 6 else None
            if number is not None and 1 <= number <= len(ids):
                citations.append(Citation(ids[number - 1], match.start(), match.end(), match.group(0)))
            elif item in known:
                citations.append(Citation(item, match.start(), match.end(), match.group(0)))
            elif number is not None:
                refused.append(f"citation [{item}]: no passage {number} ({len(ids)} given)")
            else:
                refused.append(f"citation [{item[:40]}]: not a passage given")
    return citations, refused


def _text_checked(text: str) -> str:
    if len(text) > ANSWER_MAX_CHARS:
        raise AnswerRefused("answer too long", f"{len(text)} characters, more than {ANSWER_MAX_CHARS}")
    text = re.sub("[\x00\ud800-\udfff]", "\ufffd", text).strip()
    if not text:
        raise AnswerRefused("empty answer")
    return text


def _count(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10**7 else 0


def _json(body: bytes):
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise AnswerRefused("not JSON") from None


def chat_content(status: int, body: bytes, passages: list[Passage], model: str = "") -> Answer:
    """An OpenAI-compatible chat completion's answer (choices[0].message.content) with its citations read
    against `passages`; raises AnswerRefused for a status other than 200, a body that is no completion, or
    an answer too long or empty."""
    if status != 200:
        raise AnswerRefused(f"HTTP {status}")
    data = _json(body)
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise AnswerRefused("not a chat completion") from None
    if not isinstance(content, str):
        raise AnswerRefused("not a chat completion", "content is not text")
    text = _text_checked(content)
    citations, refused = citations_parse(text, passages)
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return Answer(
        text,
        citations,
        [p.doc_id for p in passages],
        refused=refused,
        model=model,
        tokens_in=_count(usage.get("prompt_tokens")),
        tokens_out=_count(usage.get("completion_tokens")),
    )


def _ids(value, name: str, refused: list[str]) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise AnswerRefused("wrong shape", f'"{name}" is not a list')
    out = []
    for position, item in enumerate(value[:IDS_MAX]):
        if isinstance(item, bool) or not isinstance(item, str | int) or not str(item).strip():
            refused.append(f"{name}[{position}]: not a document id")
        elif len(str(item)) > ID_MAX_CHARS:
            refused.append(f"{name}[{position}]: an id longer than {ID_MAX_CHARS} characters")
        else:
            out.append(str(item).strip())
    if len(value) > IDS_MAX:
        refused.append(f"{name}: {len(value) - IDS_MAX} ids past the first {IDS_MAX} left out")
    return list(dict.fromkeys(out))


def service_answer_parse(status: int, body: bytes) -> Answer:
    """The lab's RAG service's answer (docs/generative-systems.md, "The HTTP protocol"):
    {"answer": text with markers, "retrieved": [ids], "cited": [ids]?, "follow_ups": [text]?, "model": text?,
    "tokens_in": n?, "tokens_out": n?}. Markers number the retrieved list from 1 or name its ids; a cited id
    the text does not mark is a citation without a place. Items that cannot be used are refused one by one."""
    if status != 200:
        raise AnswerRefused(f"HTTP {status}")
    data = _json(body)
    if not isinstance(data, dict) or not isinstance(data.get("answer"), str):
        raise AnswerRefused("wrong shape", 'not an object with an "answer" text')
    text = _text_checked(data["answer"])
    refused: list[str] = []
    retrieved = _ids(data.get("retrieved"), "retrieved", refused)
    cited = _ids(data.get("cited"), "cited", refused)
    citations, marker_refusals = citations_parse(text, retrieved + [c for c in cited if c not in retrieved])
    refused += marker_refusals
    marked = {c.doc_id for c in citations}
    citations += [Citation(doc, None, None) for doc in cited if doc not in marked]
    follow_ups: list[str] = []
    raw = data.get("follow_ups") or []
    if not isinstance(raw, list):
        refused.append('"follow_ups" is not a list')
        raw = []
    for position, item in enumerate(raw):
        if len(follow_ups) >= FOLLOW_UPS_MAX:
            refused.append(f"follow_ups: more than {FOLLOW_UPS_MAX}")
            break
        if not isinstance(item, str) or not item.strip() or len(item) > FOLLOW_UP_MAX_CHARS:
            refused.append(f"follow_ups[{position}]: not a text of 1 to {FOLLOW_UP_MAX_CHARS} characters")
        else:
            follow_ups.append(" ".join(item.split()))
    model = data["model"] if isinstance(data.get("model"), str) else ""
    return Answer(
        text,
        citations,
        retrieved,
        follow_ups,
        refused,
        model=model[:200],
        tokens_in=_count(data.get("tokens_in")),
        tokens_out=_count(data.get("tokens_out")),
    )


def answer_checked(answer: Answer, known: set[str]) -> Answer:
    """`answer` with every retrieved or cited id outside `known` (the study's collection) refused on its own:
    a citation to a document the participant cannot open is never shown as one."""
    refused = list(answer.refused)
    retrieved = []
    for doc in answer.retrieved:
        if doc in known:
            retrieved.append(doc)
        else:
            refused.append(f"retrieved {doc[:40]!r}: not in the study's collection")
    citations = []
    for citation in answer.citations:
        if citation.doc_id in known:
            citations.append(citation)
        else:
            refused.append(f"cited {citation.doc_id[:40]!r}: not in the study's collection")
    return Answer(
        answer.text,
        citations,
        retrieved,
        answer.follow_ups,
        list(dict.fromkeys(refused)),
        answer.model,
        answer.tokens_in,
        answer.tokens_out,
    )
