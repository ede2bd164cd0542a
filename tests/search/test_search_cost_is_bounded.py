"""A `*` (match-all) or range query reads a bounded number of documents, and its pages still agree.

Every hit of such a query has the same score; ordering the whole tie by document id read every hit of the
index. Ties are now ordered by document id within blocks of TIE_BLOCK hits of the engine's order.
"""

import pytest

from studies.search.engines import search
from studies.search.engines.formats import Document
from studies.search.engines.search import TIE_BLOCK, Searcher, build_index

N_DOCS = 3 * TIE_BLOCK + 37


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ties")
    # Ids in an order unlike their numeric order, so "sorted by id" is not the index order by chance.
    ids = sorted(range(N_DOCS), key=lambda n: (n * 7919) % N_DOCS)
    docs = [Document(str(n), f"title {n}", "same words" + (" rare" if n % 50 == 0 else "")) for n in ids]
    build_index(docs, folder / "i", "bm25_text")
    return Searcher(folder / "i", "bm25_text")


@pytest.fixture
def reads(monkeypatch):
    counted = []
    original = search._stored

    def counting(tantivy_searcher, address):
        counted.append(address)
        return original(tantivy_searcher, address)

    monkeypatch.setattr(search, "_stored", counting)
    return counted


@pytest.mark.parametrize("query", ["*", "text:[a TO z]", "same"])
def test_a_page_of_one_long_tie_reads_at_most_two_blocks_more_than_the_page(searcher, reads, query):
    for page in (1, 5, 11, 30):
        reads.clear()
        result = searcher.search(query, page=page)
        assert result.total == N_DOCS
        assert len(result.results) == 10
        assert len(reads) <= 10 + 2 * TIE_BLOCK, (page, len(reads))  # before: every one of the N_DOCS hits


def test_pages_of_a_long_tie_agree_with_one_long_page(searcher):
    one_page = [hit.doc_id for hit in searcher.search("*", page_size=N_DOCS).results]
    pages = [
        hit.doc_id for page in range(1, N_DOCS // 10 + 2) for hit in searcher.search("*", page=page).results
    ]
    assert pages == one_page
    assert sorted(one_page, key=int) == [str(n) for n in range(N_DOCS)]  # every hit once
    ranks = [hit.rank for hit in searcher.search("*", page=7).results]
    assert ranks == list(range(61, 71))


def test_each_block_of_a_long_tie_is_ordered_by_document_id(searcher):
    ids = [int(hit.doc_id) for hit in searcher.search("*", page_size=N_DOCS).results]
    blocks = [ids[start : start + TIE_BLOCK] for start in range(0, N_DOCS, TIE_BLOCK)]
    assert all(block == sorted(block) for block in blocks)
    assert ids != sorted(ids)  # across blocks the engine's order holds: the documented cost of the cap


def test_ties_shorter_than_a_block_are_still_ordered_by_document_id_after_higher_scores(searcher):
    # "same rare": the documents with "rare" (a short tie) score higher; then one long tie of the others.
    rare = [n for n in range(N_DOCS) if n % 50 == 0]
    results = searcher.search("same rare", page_size=20).results
    assert [int(hit.doc_id) for hit in results[: len(rare)]] == rare
    assert results[len(rare)].score < results[len(rare) - 1].score


def test_a_page_deeper_than_the_limit_gives_the_count_and_reads_nothing(searcher, reads, monkeypatch):
    monkeypatch.setattr(search, "MAX_DEPTH", 100)
    result = searcher.search("*", page=11)
    assert result.results == [] and result.total == N_DOCS and reads == []
    assert len(searcher.search("*", page=10).results) == 10
