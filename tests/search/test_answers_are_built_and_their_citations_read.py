"""The pure answer module (studies/search/engines/answers.py): the extractive answerer, the prompt, citations
read back, a chat completion's and the RAG service's answers, each bad item refused on its own."""

import json

import pytest

from studies.search.engines.answers import (
    ANSWER_MAX_CHARS,
    NO_ANSWER,
    AnswerRefused,
    Passage,
    answer_checked,
    chat_content,
    citations_parse,
    extractive_answer,
    prompt_build,
    prompt_check,
    sentences,
    service_answer_parse,
)

PASSAGES = [
    Passage("d7", "Wings", "Boundary layers thicken near the trailing edge. The weather was fine."),
    Passage("d3", "Flow", "Heat transfer in a boundary layer depends on the Mach number. Nothing else here."),
    Passage("d9", "Other", "Cats sleep a lot."),
]


def test_sentences_are_cut_at_full_stops_before_a_capital():
    assert sentences("One here. Two there!  three stays. 4 goes") == [
        "One here.",
        "Two there! three stays.",
        "4 goes",
    ]


def test_the_extractive_answer_cites_the_passages_its_sentences_come_from():
    answer = extractive_answer("boundary layer heat transfer", PASSAGES)
    assert answer.text == (
        "Boundary layers thicken near the trailing edge. [1] "
        "Heat transfer in a boundary layer depends on the Mach number. [2]"
    )
    assert [c.doc_id for c in answer.citations] == ["d7", "d3"]
    for citation in answer.citations:
        assert answer.text[citation.start : citation.end] == citation.marker
    assert answer.retrieved == ["d7", "d3", "d9"]
    assert answer.model == "extractive"


def test_the_extractive_answer_is_the_same_every_time():
    assert (
        extractive_answer("boundary layer", PASSAGES).as_json()
        == extractive_answer("boundary layer", PASSAGES).as_json()
    )


def test_a_query_no_sentence_shares_is_answered_that_the_documents_do_not_answer_it():
    answer = extractive_answer("quantum chromodynamics", PASSAGES)
    assert answer.text == NO_ANSWER and answer.citations == []


def test_numbers_and_ids_are_read_as_citations_and_others_refused_each():
    citations, refused = citations_parse("A [1]. B [2, d9]. C [7]. D [sic]. E [d3].", PASSAGES)
    assert [c.doc_id for c in citations] == ["d7", "d3", "d9", "d3"]
    assert refused == ["citation [7]: no passage 7 (3 given)", "citation [sic]: not a passage given"]


def test_a_number_up_to_the_passages_count_is_a_passage_even_where_an_id_is_that_number():
    citations, _ = citations_parse("x [2]", ["2", "5"])
    assert [c.doc_id for c in citations] == ["5"]


def test_the_prompt_numbers_the_passages_with_their_ids_and_keeps_earlier_turns():
    prompt = prompt_build(
        "{history}P:\n{passages}\nQ: {query}", "why", PASSAGES[:2], [("first?", "an answer")]
    )
    assert "[1] (document d7) Wings\nBoundary" in prompt
    assert "[2] (document d3) Flow" in prompt
    assert prompt.startswith("Earlier question: first?\nEarlier answer: an answer\n\n")
    assert prompt.endswith("Q: why")


@pytest.mark.parametrize(
    "template, problem",
    [
        ("{query}", "no {passages}"),
        ("{passages} {query} {secret}", "unknown placeholder"),
        ("{query {passages}", "not a template"),
    ],
)
def test_a_prompt_template_that_cannot_work_is_refused(template, problem):
    with pytest.raises(AnswerRefused, match=problem):
        prompt_check(template)


def completion(content, **extra):
    return json.dumps({"choices": [{"message": {"content": content}}], **extra}).encode()


def test_a_chat_completion_is_read_with_its_citations_and_tokens():
    body = completion(
        "Layers thicken [1]; heat [2][5].", usage={"prompt_tokens": 120, "completion_tokens": 9}
    )
    answer = chat_content(200, body, PASSAGES, model="m1")
    assert answer.cited == ["d7", "d3"]
    assert answer.refused == ["citation [5]: no passage 5 (3 given)"]
    assert (answer.tokens_in, answer.tokens_out, answer.model) == (120, 9, "m1")


@pytest.mark.parametrize(
    "status, body, category",
    [
        (500, b"oops", "HTTP 500"),
        (200, b"<html>", "not JSON"),
        (200, b'{"choices": []}', "not a chat completion"),
        (200, completion(None), "not a chat completion"),
        (200, completion("x" * (ANSWER_MAX_CHARS + 1)), "answer too long"),
        (200, completion("   "), "empty answer"),
        (200, b"[" * 100_000, "not JSON"),
    ],
)
def test_a_chat_answer_that_cannot_be_shown_is_refused_with_its_category(status, body, category):
    with pytest.raises(AnswerRefused) as refused:
        chat_content(status, body, PASSAGES)
    assert refused.value.category == category


def test_the_service_s_answer_is_read_and_its_bad_items_refused_one_by_one():
    body = json.dumps(
        {
            "answer": "Layers [1] and heat [d3] and [4].",
            "retrieved": ["d7", "d3", {"x": 1}],
            "cited": ["d9"],
            "follow_ups": ["What about Mach 2?", 7, "y" * 400],
            "model": "lab-rag-1",
        }
    ).encode()
    answer = service_answer_parse(200, body)
    assert answer.retrieved == ["d7", "d3"]
    assert [(c.doc_id, c.start is None) for c in answer.citations] == [
        ("d7", False),
        ("d3", False),
        ("d9", True),
    ]
    assert answer.follow_ups == ["What about Mach 2?"]
    assert answer.model == "lab-rag-1"
    assert answer.refused == [
        "retrieved[2]: not a document id",
        "citation [4]: no passage 4 (3 given)",
        "follow_ups[1]: not a text of 1 to 300 characters",
        "follow_ups[2]: not a text of 1 to 300 characters",
    ]


@pytest.mark.parametrize("body", [b'{"retrieved": []}', b'["answer"]', b'{"answer": "x", "retrieved": "d1"}'])
def test_a_service_answer_of_the_wrong_shape_is_refused(body):
    with pytest.raises(AnswerRefused) as refused:
        service_answer_parse(200, body)
    assert refused.value.category == "wrong shape"


def test_ids_outside_the_collection_are_refused_and_never_shown_as_citations():
    answer = answer_checked(
        service_answer_parse(200, b'{"answer": "a [1] b [2]", "retrieved": ["d7", "zz"]}'), {"d7"}
    )
    assert answer.cited == ["d7"] and answer.retrieved == ["d7"]
    assert answer.refused == [
        "retrieved 'zz': not in the study's collection",
        "cited 'zz': not in the study's collection",
    ]
