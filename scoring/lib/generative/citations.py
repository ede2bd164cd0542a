"""Citation support of answers and sessions, as the TREC 2024 RAG track's support evaluation measures it.

Source: Thakur, Pradeep, Upadhyay, Campos, Craswell & Lin, "Support Evaluation for the TREC 2024 RAG Track:
Comparing Human versus LLM Judges" (arXiv 2504.15205; SIGIR 2025). Each (answer sentence, cited document)
pair is judged full support, partial support or no support (here the labels `support`, `partial_support`,
`not_support` of the nugget assignments, one vocabulary for both), with the credit c = 1, 0.5, 0:

    weighted precision  = sum over judged pairs of c(pair) / |judged pairs|
                          (how much of what the answer cites supports the sentence that cites it)
    weighted recall     = sum over sentences of max_{its judged citations} c / |sentences|
                          (how much of the answer is supported; a sentence without a citation counts 0)
    strict precision    = |pairs with support| / |judged pairs|
    strict recall       = |sentences with a fully supporting citation| / |sentences|

The paper's recall credits a sentence with its support; where a sentence cites several documents it is
credited with its best-supported citation (one supporting document is enough to support a sentence), which is
the reading this project takes. A pair with no judgment is left out of precision and counted in `unjudged`; a
sentence whose citations are all unjudged is left out of recall (counted in `unjudged_sentences`), so a
missing judgment never passes for "no support". Where a denominator is 0 the value is 0 and the counts say
so. A session pools the pairs and sentences of all its answers (`session_citation_support`), so a turn with
many citations weighs more in precision: the "many citations, little support" pattern shows as many pairs at
low precision (`citations` and `supporting` per session).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .nuggets import ASSIGNMENTS, CREDIT


class CitationError(ValueError):
    """A support judgment that is not one of the labels, or that names no citation of the answer."""


@dataclass(frozen=True)
class Answer:
    """An answer as sentences, each with the documents it cites (in order); `support` {(sentence index,
    document): support | partial_support | not_support} (sentence indices from 0)."""

    sentences: Sequence[Sequence[str]]
    support: Mapping[tuple[int, str], str]


@dataclass(frozen=True)
class CitationSupport:
    precision: float
    recall: float
    strict_precision: float
    strict_recall: float
    sentences: int  # the sentences counted in recall
    citations: int  # the judged (sentence, document) pairs counted in precision
    supporting: int  # of those, the pairs judged `support`
    unjudged: int  # pairs without a judgment (left out)
    unjudged_sentences: int  # sentences whose citations are all unjudged (left out of recall)


def _check(answer: Answer, where: str) -> None:
    pairs = {(i, doc) for i, cited in enumerate(answer.sentences) for doc in cited}
    for pair, label in answer.support.items():
        if pair not in pairs:
            raise CitationError(
                f"{where}: sentence {pair[0]} does not cite {pair[1]!r}, yet its support is judged"
            )
        if label not in ASSIGNMENTS:
            raise CitationError(
                f"{where}: sentence {pair[0]}, document {pair[1]!r}: support {label!r} is not one of "
                f"{', '.join(ASSIGNMENTS)}"
            )


def _ratio(top: float, bottom: int) -> float:
    return top / bottom if bottom > 0 else 0.0


def _tally(answers: Sequence[Answer]) -> CitationSupport:
    credit_sum = strict_pairs = pairs = unjudged = 0.0
    sentence_credit = sentence_strict = sentences = unjudged_sentences = 0.0
    for k, answer in enumerate(answers):
        _check(answer, f"answer {k + 1}")
        for i, cited in enumerate(answer.sentences):
            labels = [answer.support.get((i, doc)) for doc in dict.fromkeys(cited)]
            judged = [label for label in labels if label is not None]
            unjudged += len(labels) - len(judged)
            pairs += len(judged)
            credit_sum += sum(CREDIT[label] for label in judged)
            strict_pairs += sum(1 for label in judged if label == "support")
            if labels and not judged:
                unjudged_sentences += 1
                continue
            sentences += 1
            sentence_credit += max((CREDIT[label] for label in judged), default=0.0)
            sentence_strict += 1.0 if "support" in judged else 0.0
    return CitationSupport(
        precision=_ratio(credit_sum, int(pairs)),
        recall=_ratio(sentence_credit, int(sentences)),
        strict_precision=_ratio(strict_pairs, int(pairs)),
        strict_recall=_ratio(sentence_strict, int(sentences)),
        sentences=int(sentences),
        citations=int(pairs),
        supporting=int(strict_pairs),
        unjudged=int(unjudged),
        unjudged_sentences=int(unjudged_sentences),
    )


def citation_support(answer: Answer) -> CitationSupport:
    """One answer's support precision and recall (the module's formulas)."""
    return _tally([answer])


def session_citation_support(answers: Sequence[Answer]) -> CitationSupport:
    """A session's: the pairs and sentences of all its answers pooled."""
    return _tally(answers)
