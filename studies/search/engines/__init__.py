"""Document collections and search systems for studies, as plain Python (the Django app wraps them).

- `studies.search.engines.formats`: readers for Cranfield, TREC documents/topics/qrels and JSON-lines
  documents.
- `studies.search.engines.search`: built-in BM25 systems on tantivy (`build_index`, `Searcher`,
  `CONFIGURATIONS`).
- `studies.search.engines.http`: `HttpSearchSystem`, a researcher's own engine behind an HTTP URL.

See docs/collections-and-systems.md.
"""
