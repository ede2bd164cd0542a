"""Built-in search systems: BM25 over a tantivy index of a document list.

`build_index` is an explicit step (a management command or task calls it); `Searcher` only opens an index
that was built with the same configuration, and never builds one. Plain Python only: no Django here.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import tantivy

from studies.search.engines.formats import Document

__all__ = [
    "CONFIGURATIONS",
    "Hit",
    "IndexMismatchError",
    "SearchConfig",
    "SearchPage",
    "Searcher",
    "build_index",
    "get_config",
    "read_index_meta",
]

META_FILE = "sessionlab-index.json"
META_FORMAT = 1
SNIPPET_CHARS = 200
MAX_PAGE_SIZE = 1000
# Hits of equal score are ordered by document id within blocks of TIE_BLOCK hits in the engine's own order
# (score, then index position); a run of ties longer than that is ordered block by block. A page therefore
# costs at most page_size + 2 * TIE_BLOCK stored documents whatever the query
# (docs/collections-and-systems.md).
TIE_BLOCK = 100
MAX_DEPTH = 10_000  # a page starting deeper than this shows no hits (participants stop at page 100 of 10)


@dataclass(frozen=True)
class SearchConfig:
    name: str
    description: str
    tokenizer: str  # tantivy tokenizer for the searchable fields
    boosts: dict[str, float]  # searchable field -> boost; "text" is always searchable


_CONFIGS = {
    config.name: config
    for config in (
        SearchConfig(
            "bm25_title_text",
            "BM25 over title (boosted 2x) and text, English stemming (Porter), lower-cased.",
            "en_stem",
            {"title": 2.0, "text": 1.0},
        ),
        SearchConfig(
            "bm25_text",
            "BM25 over the text only, no stemming (tantivy's default tokenizer: split on non-alphanumerics, "
            "lower-case).",
            "default",
            {"text": 1.0},
        ),
    )
}

# name -> human-readable description, for choosing a system in a study.
CONFIGURATIONS: dict[str, str] = {name: config.description for name, config in _CONFIGS.items()}


def get_config(config: str | SearchConfig) -> SearchConfig:
    if isinstance(config, SearchConfig):
        return config
    try:
        return _CONFIGS[config]
    except KeyError:
        raise ValueError(f"unknown search configuration {config!r}; known: {sorted(_CONFIGS)}") from None


MAX_HIGHLIGHTS = 50  # (start, end) pairs a result carries to the participant's page: enough for any snippet


def highlights_checked(raw, snippet: str) -> tuple[tuple[int, int], ...]:
    """The usable (start, end) character offsets of `raw` in `snippet`, sorted: each a pair of integers with
    0 <= start < end <= len(snippet); anything else (a pair out of range, a float, a bool, a non-list) is
    dropped, not refused (a highlight is a nicety: the result is shown without it). At most MAX_HIGHLIGHTS."""
    if not isinstance(raw, list | tuple):
        return ()
    pairs = []
    for pair in raw[: MAX_HIGHLIGHTS * 4]:  # a flood of bad pairs is not walked to its end
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            continue
        start, end = pair
        if any(isinstance(v, bool) or not isinstance(v, int) for v in (start, end)):
            continue
        if 0 <= start < end <= len(snippet):
            pairs.append((start, end))
        if len(pairs) == MAX_HIGHLIGHTS:
            break
    return tuple(sorted(set(pairs)))


@dataclass(frozen=True)
class Hit:
    doc_id: str
    rank: int  # absolute: the first hit of page 2 with page_size 10 has rank 11
    score: float | None
    title: str
    snippet: str
    highlights: tuple[tuple[int, int], ...] = ()  # (start, end) character offsets of matches in snippet
    url: str | None = None


@dataclass(frozen=True)
class SearchPage:
    results: list[Hit]
    total: int | None  # number of matching documents; None when the system does not say
    page: int
    error: str | None = None  # a plain message for the participant; results may still be present
    detail: str | None = None  # the technical reason, for logs and researchers
    page_size: int = 10
    query_used: str | None = None  # set when the query was rewritten to recover from a syntax error
    unavailable: bool = False  # the system could not answer now (an HTTP system's failure): ask again later


class IndexMismatchError(ValueError):
    """The index directory is missing, not ours, or was built with another configuration."""


def _schema(config: SearchConfig) -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("doc_id", stored=True, tokenizer_name="raw")
    if "title" in config.boosts:
        builder.add_text_field("title", stored=True, tokenizer_name=config.tokenizer)
    else:
        builder.add_bytes_field("title", stored=True, indexed=False)  # shown, not searchable
    builder.add_text_field("text", stored=True, tokenizer_name=config.tokenizer)
    return builder.build()


def build_index(
    documents: Iterable[Document],
    index_dir: str | Path,
    config: str | SearchConfig,
    version: int | None = None,
) -> int:
    """Build (or rebuild) the index for `config` in `index_dir`; returns the number of documents. `version`
    (the database's number for it, when given) is written in its meta file, moved into place with it.

    The index is written next to `index_dir` and moved into place when complete, so a failed build leaves
    any previous index untouched. A directory that exists but does not hold one of our indexes is refused
    rather than deleted. Duplicate document ids are an error."""
    config = get_config(config)
    index_dir = Path(index_dir)
    documents = list(documents)
    seen: set[str] = set()
    for document in documents:
        if document.external_id in seen:
            raise ValueError(f"duplicate document id {document.external_id!r}")
        seen.add(document.external_id)
    if index_dir.exists() and (
        not index_dir.is_dir() or (any(index_dir.iterdir()) and not (index_dir / META_FILE).exists())
    ):
        raise IndexMismatchError(
            f"{index_dir} exists and is not a SessionLab index; refusing to overwrite it"
        )
    index_dir.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=index_dir.name + ".building-", dir=index_dir.parent))
    try:
        schema = _schema(config)
        index = tantivy.Index(schema, path=str(building))
        writer = index.writer(heap_size=50_000_000, num_threads=1)  # one thread: one segment, stable order
        for document in documents:
            fields: dict[str, str | bytes] = {"doc_id": document.external_id, "text": document.text}
            fields["title"] = document.title if "title" in config.boosts else document.title.encode("utf-8")
            writer.add_document(tantivy.Document(**fields))
        writer.commit()
        writer.wait_merging_threads()
        meta = {
            "format": META_FORMAT,
            "config": config.name,
            "documents": len(seen),
            "tantivy": getattr(tantivy, "__version__", "unknown"),
        }
        if version is not None:
            meta["version"] = version
        (building / META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        if index_dir.exists():
            old = Path(tempfile.mkdtemp(prefix=index_dir.name + ".old-", dir=index_dir.parent))
            index_dir.rename(old / "index")
            building.rename(index_dir)
            shutil.rmtree(old, ignore_errors=True)
        else:
            building.rename(index_dir)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return len(seen)


def read_index_meta(index_dir: str | Path) -> dict:
    path = Path(index_dir) / META_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise IndexMismatchError(
            f"{index_dir} holds no SessionLab index (no {META_FILE}); build it first"
        ) from None
    except (OSError, ValueError) as exc:
        raise IndexMismatchError(f"{path} is unreadable: {exc}") from None


def _doc_key(doc_id: str) -> tuple:
    """Ties in score are broken by document id: numerically when the id is a number, else as text."""
    return (0, int(doc_id), "") if doc_id.isdigit() else (1, 0, doc_id)


def _stored(searcher, address):
    """A hit's stored fields: the one place a search reads documents (the tests count the calls)."""
    return searcher.doc(address)


def _hit_count(result: tantivy.SearchResult) -> int:
    """How many documents matched (the search asked count=True). tantivy's stubs (0.27) omit this property."""
    return result.count  # type: ignore[attr-defined]


def _tie_blocks(scores: list[float]) -> list[tuple[int, int]]:
    """[start, end) ranges of `scores` (descending, the engine's order) that are ordered by document id: a run
    of equal scores, cut into blocks of TIE_BLOCK from its first hit. The blocks depend only on the engine's
    order, so every page of a query agrees with every other on where each hit goes."""
    blocks, start = [], 0
    for i in range(1, len(scores) + 1):
        if i == len(scores) or scores[i] != scores[start] or i - start == TIE_BLOCK:
            blocks.append((start, i))
            start = i
    return blocks


_WORD = re.compile(r"\w+")
_FIELD_PREFIX = re.compile(r"\b\w+:")


def _plain_words(query_text: str) -> str:
    """The query reduced to its words (field prefixes and all syntax dropped), lower-cased so that AND/OR/NOT
    are words, not operators."""
    return " ".join(word.lower() for word in _WORD.findall(_FIELD_PREFIX.sub(" ", query_text)))


def _explain(query_text: str, errors: list[str], config: SearchConfig) -> str:
    """Tantivy's parse errors in words a participant can act on."""
    reasons = []
    if query_text.count('"') % 2:
        reasons.append("a quotation mark is not closed")
    if query_text.count("(") != query_text.count(")"):
        reasons.append("the brackets do not match")
    for error in errors:
        missing = re.search(
            r"Field does not exist: '([^']*)'|field '([^']*)' is not declared as indexed", error
        )
        if missing:
            reasons.append(
                f"there is no searchable field called '{missing.group(1) or missing.group(2)}' "
                "(searchable: " + ", ".join(sorted(config.boosts)) + ")"
            )
        elif "Only excluding terms" in error:
            reasons.append("a query cannot consist only of excluded (-) words")
    unique = list(dict.fromkeys(reasons)) or ["part of it uses search syntax that could not be read"]
    return "Your query could not be read exactly as typed: " + "; ".join(unique) + "."


class Searcher:
    """Searches an index built by `build_index` with the same configuration."""

    def __init__(self, index_dir: str | Path, config: str | SearchConfig):
        self.config = get_config(config)
        self.index_dir = Path(index_dir)
        meta = read_index_meta(self.index_dir)
        if meta.get("format") != META_FORMAT or meta.get("config") != self.config.name:
            raise IndexMismatchError(
                f"{self.index_dir} was built with configuration {meta.get('config')!r}, "
                f"not {self.config.name!r}; rebuild it or open it with its own"
            )
        self.meta = meta
        self._index = tantivy.Index.open(str(self.index_dir))
        self._schema = self._index.schema
        self._fields = sorted(self.config.boosts)
        self._boosts = {name: boost for name, boost in self.config.boosts.items() if boost != 1.0}

    @property
    def num_docs(self) -> int:
        return self._index.searcher().num_docs

    def _parse(self, query_text: str):
        return self._index.parse_query(query_text, self._fields, field_boosts=self._boosts)

    def _parse_for_participant(self, query_text: str):
        """(query, error message, detail, rewritten query text). Never raises for a participant's typo: a
        query tantivy cannot parse is parsed leniently, and if what survives matches nothing, searched as
        its plain words."""
        try:
            return self._parse(query_text), None, None, None
        except ValueError as exc:
            errors = [str(exc)]
        lenient, lenient_errors = self._index.parse_query_lenient(
            query_text, self._fields, field_boosts=self._boosts
        )
        errors += [str(e) for e in lenient_errors]
        message = _explain(query_text, errors, self.config)
        detail = "; ".join(dict.fromkeys(errors))
        if any("Only excluding terms" in error for error in errors):
            return None, message + " Please add a word to search for.", detail, None
        if _hit_count(self._index.searcher().search(lenient, 1, count=True)) > 0:
            return lenient, message + " Showing results for what could be read.", detail, None
        words = _plain_words(query_text)
        if not words:
            return None, message + " Please try different words.", detail, ""
        try:
            query = self._parse(words)
        except ValueError as exc:  # words only: should not happen, but a participant never sees a crash
            return None, message + " Please try different words.", f"{detail}; {exc}", words
        return query, message + f" Showing results for: {words}", detail, words

    def search(self, query_text: str, page: int = 1, page_size: int = 10) -> SearchPage:
        if page < 1 or not 1 <= page_size <= MAX_PAGE_SIZE:
            raise ValueError(f"page must be >= 1 and page_size in 1..{MAX_PAGE_SIZE}")
        if not query_text or not query_text.strip():
            return SearchPage([], 0, page, "Please type some words to search for.", None, page_size)
        query, error, detail, rewritten = self._parse_for_participant(query_text)
        if query is None:
            return SearchPage([], 0, page, error, detail, page_size, rewritten)
        searcher = self._index.searcher()
        offset = (page - 1) * page_size
        wanted = offset + page_size
        if offset >= MAX_DEPTH:  # deeper than any page we serve: the count, no hits loaded
            return SearchPage(
                [],
                _hit_count(searcher.search(query, 1, count=True)),
                page,
                error,
                detail,
                page_size,
                rewritten,
            )
        # One search, never widened: TIE_BLOCK hits past the page are enough to close the tie block the page
        # ends in (a `*` or range query gives every hit one score; widening until the tie ended loaded them
        # all).
        result = searcher.search(query, wanted + TIE_BLOCK, count=True)
        hits, total = result.hits, _hit_count(result)
        window = []
        for start, end in _tie_blocks([score for score, _address in hits]):
            if end <= offset or start >= wanted:
                continue
            # Only the blocks the page overlaps are read from the store and ordered by document id.
            block = [(score, _stored(searcher, address)) for score, address in hits[start:end]]
            block.sort(key=lambda item: _doc_key(item[1]["doc_id"][0]))
            window += block[max(offset - start, 0) : wanted - start]
        generator = None
        if window:
            generator = tantivy.SnippetGenerator.create(searcher, query, self._schema, "text")
            generator.set_max_num_chars(SNIPPET_CHARS)
        results = []
        for position, (score, stored) in enumerate(window, start=offset + 1):
            snippet, highlights = _snippet(generator, stored)
            title = stored["title"][0] if stored["title"] else ""
            if isinstance(title, bytes | list):
                title = bytes(title).decode("utf-8")
            results.append(Hit(stored["doc_id"][0], position, float(score), title, snippet, highlights))
        return SearchPage(results, total, page, error, detail, page_size, rewritten)


def _snippet(generator, stored) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The best-matching passage of the text with character offsets of the matched words; the start of
    the text when no word of the query occurs in it (e.g. a title-only match)."""
    text = stored["text"][0] if stored["text"] else ""
    snippet = generator.snippet_from_doc(stored)
    fragment = snippet.fragment()
    if fragment.strip():
        encoded = fragment.encode("utf-8")  # tantivy's offsets are in bytes
        highlights = tuple(
            (
                len(encoded[: r.start].decode("utf-8", "ignore")),
                len(encoded[: r.end].decode("utf-8", "ignore")),
            )
            for r in snippet.highlighted()
        )
        return fragment, highlights
    if len(text) <= SNIPPET_CHARS:
        return text, ()
    cut = text.rfind(" ", 0, SNIPPET_CHARS)
    return text[: cut if cut > SNIPPET_CHARS // 2 else SNIPPET_CHARS].rstrip() + " …", ()
