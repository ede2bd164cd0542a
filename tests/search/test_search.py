"""Built-in tantivy search systems: Cranfield sanity, paging, ties, snippets, syntax-error fallback."""

import json

import pytest

from studies.search.engines.formats import Document, read_cranfield
from studies.search.engines.search import (
    CONFIGURATIONS,
    IndexMismatchError,
    Searcher,
    build_index,
    get_config,
)


@pytest.fixture(scope="session")
def cran(cranfield_folder):
    return read_cranfield(cranfield_folder)


@pytest.fixture(scope="session")
def cran_indexes(cran, tmp_path_factory):
    """One Cranfield index per configuration, built once for the whole session."""
    root = tmp_path_factory.mktemp("cranfield-indexes")
    for name in CONFIGURATIONS:
        assert build_index(cran.documents, root / name, name) == 1400
    return root


@pytest.fixture(scope="session")
def searchers(cran_indexes):
    return {name: Searcher(cran_indexes / name, name) for name in CONFIGURATIONS}


def _relevant(cran, topic_id):
    return {j.doc_id for j in cran.judgments if j.topic_id == topic_id and j.grade > 0}


def test_configurations_registry():
    assert {"bm25_title_text", "bm25_text"} <= set(CONFIGURATIONS)
    assert all(isinstance(text, str) and text for text in CONFIGURATIONS.values())
    with pytest.raises(ValueError, match="unknown search configuration"):
        get_config("tf_idf_magic")


@pytest.mark.parametrize("name", ["bm25_title_text", "bm25_text"])
def test_cranfield_query_1_finds_relevant_documents(cran, searchers, name):
    page = searchers[name].search(cran.topics[0].text)
    assert page.error is None
    assert page.total > 1000  # OR semantics: most documents share some word with a long question
    assert [hit.rank for hit in page.results] == list(range(1, 11))
    assert len(_relevant(cran, "1") & {hit.doc_id for hit in page.results}) >= 2


def test_configurations_rank_differently(cran, searchers):
    rankings = {
        name: [hit.doc_id for hit in searchers[name].search(cran.topics[0].text).results]
        for name in CONFIGURATIONS
    }
    assert rankings["bm25_title_text"] != rankings["bm25_text"]


def test_stemming_only_in_title_text(searchers):
    # "slipstreams" only matches "slipstream" through the English stemmer.
    assert searchers["bm25_title_text"].search("slipstreams").total > 0
    assert (
        searchers["bm25_text"].search("slipstreams").total < searchers["bm25_text"].search("slipstream").total
    )


def test_mean_precision_at_10_is_sane(cran, searchers):
    for name, searcher in searchers.items():
        precisions = []
        for topic in cran.topics:
            ids = {hit.doc_id for hit in searcher.search(topic.text).results}
            precisions.append(len(ids & _relevant(cran, topic.topic_id)) / 10)
        # Measured with tantivy 0.27: 0.217 (bm25_title_text), 0.209 (bm25_text); no stop words removed.
        assert sum(precisions) / len(precisions) > 0.18, name


def test_paging_ranks_are_absolute_and_consistent(cran, searchers):
    searcher = searchers["bm25_title_text"]
    query = cran.topics[4].text
    first, second = searcher.search(query, page=1), searcher.search(query, page=2)
    both = searcher.search(query, page=1, page_size=20)
    assert [hit.rank for hit in second.results] == list(range(11, 21))
    assert second.page == 2 and second.total == first.total == both.total
    assert [h.doc_id for h in first.results + second.results] == [h.doc_id for h in both.results]
    scores = [h.score for h in both.results]
    assert scores == sorted(scores, reverse=True)
    far = searcher.search(query, page=10_000)
    assert far.results == [] and far.total == first.total


def test_snippets_are_plain_text_with_highlights(searchers):
    page = searchers["bm25_title_text"].search("slipstream")
    for hit in page.results:
        assert "<b>" not in hit.snippet and len(hit.snippet) <= 250
        assert hit.highlights
        for start, end in hit.highlights:
            assert hit.snippet[start:end].lower().startswith("slipstream")
    assert page.results[0].title


def test_snippet_falls_back_to_start_of_text(tmp_path):
    text = "word " * 100
    build_index([Document("a", "special title", text.strip())], tmp_path / "i", "bm25_title_text")
    hit = Searcher(tmp_path / "i", "bm25_title_text").search("special").results[0]
    assert hit.highlights == ()
    assert hit.snippet.startswith("word word") and hit.snippet.endswith("…") and len(hit.snippet) <= 202


def test_ties_are_ordered_by_document_id(tmp_path):
    docs = [Document(str(i), "", "same words here") for i in (10, 2, 33, 1, 21, 3)]
    build_index(docs, tmp_path / "i", "bm25_text")
    searcher = Searcher(tmp_path / "i", "bm25_text")
    assert [h.doc_id for h in searcher.search("same", page_size=6).results] == [
        "1",
        "2",
        "3",
        "10",
        "21",
        "33",
    ]
    assert [h.doc_id for h in searcher.search("same", page=2, page_size=2).results] == ["3", "10"]


@pytest.mark.parametrize(
    "query, says",
    [
        ('"wing slipstream', "quotation mark is not closed"),
        ("(wing slipstream", "brackets do not match"),
        ("wing slipstream)", "brackets do not match"),
        ("author:wing slipstream", "no searchable field called 'author'"),
        ("wing AND", "could not be read"),
        ("wing^", "could not be read"),
    ],
)
def test_syntax_errors_fall_back_to_results_and_a_message(searchers, query, says):
    for searcher in searchers.values():
        page = searcher.search(query)
        assert page.error and says in page.error
        assert page.detail  # tantivy's own words, for the log
        assert page.results, query
        assert any("wing" in h.snippet.lower() or "wing" in h.title.lower() for h in page.results)


def test_title_field_is_searchable_only_where_configured(searchers):
    assert searchers["bm25_title_text"].search("title:slipstream").error is None
    page = searchers["bm25_text"].search("title:slipstream")
    assert "no searchable field called 'title'" in page.error and page.results
    assert page.query_used == "slipstream"


@pytest.mark.parametrize("query", ["", "   ", '"', "+", "-wing", "()"])
def test_queries_without_anything_to_search_give_a_message(searchers, query):
    page = searchers["bm25_text"].search(query)
    assert page.results == [] and page.error


def test_index_of_another_configuration_is_refused(cran_indexes):
    with pytest.raises(IndexMismatchError, match="built with configuration 'bm25_text'"):
        Searcher(cran_indexes / "bm25_text", "bm25_title_text")
    meta = json.loads((cran_indexes / "bm25_text" / "sessionlab-index.json").read_text())
    assert meta["config"] == "bm25_text" and meta["documents"] == 1400


def test_searcher_never_builds(tmp_path):
    with pytest.raises(IndexMismatchError, match="build it first"):
        Searcher(tmp_path / "nothing", "bm25_text")
    assert not (tmp_path / "nothing").exists()


def test_rebuild_replaces_and_foreign_directory_is_refused(tmp_path):
    build_index([Document("a", "", "alpha")], tmp_path / "i", "bm25_text")
    build_index([Document("b", "", "beta")], tmp_path / "i", "bm25_text")
    searcher = Searcher(tmp_path / "i", "bm25_text")
    assert searcher.search("alpha").total == 0 and searcher.search("beta").total == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["i"]
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(IndexMismatchError, match="not a SessionLab index"):
        build_index([Document("a", "", "alpha")], tmp_path / "mine", "bm25_text")
    assert (tmp_path / "mine" / "notes.txt").exists()


def test_duplicate_ids_fail_the_build_and_keep_the_old_index(tmp_path):
    build_index([Document("a", "", "alpha")], tmp_path / "i", "bm25_text")
    with pytest.raises(ValueError, match="duplicate document id 'x'"):
        build_index([Document("x", "", "one"), Document("x", "", "two")], tmp_path / "i", "bm25_text")
    assert Searcher(tmp_path / "i", "bm25_text").search("alpha").total == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["i"]


def test_unicode_highlights_are_character_offsets(tmp_path):
    build_index([Document("u", "Über", "Straße über die Brücke")], tmp_path / "i", "bm25_text")
    hit = Searcher(tmp_path / "i", "bm25_text").search("brücke").results[0]
    assert [hit.snippet[s:e] for s, e in hit.highlights] == ["Brücke"]
    assert hit.title == "Über"
