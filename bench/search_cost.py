"""Benchmark of the built-in search engine's cost per query (studies/search/engines/search.py): prints figures
only.

Builds an index of 20,000 generated documents (5,000-word vocabulary, 5-word titles, 80-word texts), then
times pages 1 and 10 of a plain two-word query, a match-all query (`*`) and a range query over the text
(`text:[w1 TO w2]`, which matches every document here), each the median of many runs, and prints the ratio of
each to the plain query. A match-all or range query gives every hit the same score; the engine orders ties by
document id only within blocks of TIE_BLOCK hits, so such a query reads a bounded number of documents.

Run with `.venv/bin/python bench/search_cost.py [--documents N] [--repeat N]`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from studies.search.engines import search  # noqa: E402
from studies.search.engines.formats import Document  # noqa: E402

QUERIES = {"plain": "w17 w42", "match-all": "*", "range": "text:[w1 TO w2]"}


def documents(count: int, seed: int = 14) -> list[Document]:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(5000)]
    return [
        Document(str(i), " ".join(rng.choices(words, k=5)), " ".join(rng.choices(words, k=80)))
        for i in range(count)
    ]


def median_ms(searcher, query: str, page: int, repeat: int) -> tuple[float, int]:
    loaded = 0
    original = search._stored

    def counting(tantivy_searcher, address):
        nonlocal loaded
        loaded += 1
        return original(tantivy_searcher, address)

    search._stored = counting
    try:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            searcher.search(query, page=page)
            times.append(time.perf_counter() - start)
    finally:
        search._stored = original
    return 1000 * statistics.median(times), loaded // repeat


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        search.build_index(documents(args.documents), Path(folder) / "index", "bm25_title_text")
        print(
            f"index of {args.documents:,} documents built in {time.perf_counter() - start:.1f} s "
            f"(TIE_BLOCK {search.TIE_BLOCK})"
        )
        searcher = search.Searcher(Path(folder) / "index", "bm25_title_text")
        for query in QUERIES.values():  # warm the index's caches
            searcher.search(query)
        for page in (1, 10):
            figures = {name: median_ms(searcher, query, page, args.repeat) for name, query in QUERIES.items()}
            plain = figures["plain"][0]
            for name, query in QUERIES.items():
                ms, loaded = figures[name]
                total = searcher.search(query).total
                print(
                    f"page {page:>2}  {name:<9} {query!r:<18} {total:>6} hits  {ms:7.3f} ms median  "
                    f"{loaded:>4} documents read  {ms / plain:5.1f}x plain"
                )


if __name__ == "__main__":
    main()
