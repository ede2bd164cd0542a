"""Citation support (scoring/lib/generative/citations.py), the TREC 2024 RAG support evaluation's weighted
precision and recall over (sentence, cited document) pairs (Thakur et al., arXiv 2504.15205), by hand."""

import pytest

from scoring.lib.generative import Answer, CitationError, citation_support, session_citation_support

# Four sentences: two citations (one full, one partial), one citation with no support, no citation, and one
# citation not judged yet.
ANSWER = Answer(
    sentences=[["d1", "d2"], ["d3"], [], ["d4"]],
    support={(0, "d1"): "support", (0, "d2"): "partial_support", (1, "d3"): "not_support"},
)


def test_one_answer_by_hand():
    s = citation_support(ANSWER)
    # Judged pairs: 1 + 0.5 + 0 over 3; sentences counted: 0 (best 1), 1 (0), 2 (no citation, 0) over 3.
    assert s.precision == pytest.approx(1.5 / 3) and s.strict_precision == pytest.approx(1 / 3)
    assert s.recall == pytest.approx(1 / 3) and s.strict_recall == pytest.approx(1 / 3)
    assert (s.citations, s.supporting, s.sentences) == (3, 1, 3)
    assert (s.unjudged, s.unjudged_sentences) == (1, 1)  # d4's sentence waits for its judgment


def test_many_citations_little_support_shows_in_the_pooled_session():
    careful = Answer(sentences=[["d1"]], support={(0, "d1"): "support"})
    lavish = Answer(
        sentences=[["d2", "d3", "d4", "d5"]],
        support={
            (0, "d2"): "partial_support",
            (0, "d3"): "not_support",
            (0, "d4"): "not_support",
            (0, "d5"): "not_support",
        },
    )
    s = session_citation_support([careful, lavish])
    assert (s.citations, s.supporting) == (5, 1)
    assert s.precision == pytest.approx(1.5 / 5) and s.recall == pytest.approx(1.5 / 2)
    assert citation_support(lavish).recall == pytest.approx(0.5)  # the sentence's best citation: partial


def test_an_answer_without_citations_scores_zero_and_says_so():
    s = citation_support(Answer(sentences=[[], []], support={}))
    assert (s.precision, s.recall, s.citations, s.sentences) == (0.0, 0.0, 0, 2)


def test_a_judgment_of_no_citation_or_an_unknown_label_is_refused():
    with pytest.raises(CitationError, match="sentence 1 does not cite 'd1'"):
        citation_support(Answer(sentences=[["d1"], []], support={(1, "d1"): "support"}))
    with pytest.raises(CitationError, match="support 'yes'"):
        citation_support(Answer(sentences=[["d1"]], support={(0, "d1"): "yes"}))
