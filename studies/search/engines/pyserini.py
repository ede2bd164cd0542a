"""Pyserini's REST server (`python -m pyserini.server.rest`, port 8081 by default) as a named preset of the
HTTP system: `{"preset": "pyserini", "base_url": "http://127.0.0.1:8081", "index": "msmarco-v1-passage"}`.

Its search is `GET {base_url}/v1/indexes/{index}/search?query=...&hits=N`, answering
`{"api": "v1", "index": ..., "query": {"text": ...}, "candidates": [{"docid", "score", "rank", "doc"}]}`
ranked from 1, with no paging: the preset asks for page x page_size hits and keeps the page's slice
(engines/http.py, `pyserini_response`). A candidate's `doc` is null, a string (the stored raw text) or an
object (the parsed JSON document: `contents`, or `title` and `text`, as Pyserini's collections store them).
No I/O here: the call goes through sessionlab.outbound like any HTTP system's.
"""

from __future__ import annotations

import urllib.parse

PRESET = "pyserini"
SETTINGS = frozenset({"preset", "base_url", "index", "timeout"})
SNIPPET_CHARS = 300  # a result's snippet: the document's text cut at a word near this length
TITLE_CHARS = 200


def preset_url_template(*, base_url, index) -> str:
    """The HTTP system's URL template for a Pyserini server at `base_url` searching `index` (a prebuilt
    index's name or a path on the server); ValueError naming the setting when either is unusable."""
    if not isinstance(base_url, str) or not base_url.strip():
        raise ValueError('a pyserini system needs "base_url", e.g. "http://127.0.0.1:8081"')
    base = base_url.strip().rstrip("/")
    parts = urllib.parse.urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise ValueError(
            f'"base_url" must be an http:// or https:// address without a query, not {base_url!r}'
        )
    if not isinstance(index, str) or not index.strip():
        raise ValueError('a pyserini system needs "index", the name of the index on the server')
    escaped = base.replace("{", "{{").replace("}", "}}")
    name = urllib.parse.quote(index.strip(), safe="").replace("{", "{{").replace("}", "}}")
    return f"{escaped}/v1/indexes/{name}/search?query={{query}}&hits={{hits}}"


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut) + " …"


def candidate_as_result(candidate) -> dict:
    """One Pyserini candidate as a result in SessionLab's own shape (id, score, title, snippet, url); a
    ValueError names what is wrong (no object, no docid, a score that is not a number)."""
    if not isinstance(candidate, dict):
        raise ValueError("is not an object")
    docid = candidate.get("docid")
    if isinstance(docid, bool) or not isinstance(docid, str | int):
        raise ValueError(f'has no usable "docid" ({docid!r})')
    result: dict = {"id": docid, "score": candidate.get("score")}
    doc = candidate.get("doc")
    title, text, url = "", "", None
    found: str | None
    if isinstance(doc, str):
        text = doc
    elif isinstance(doc, dict):
        found = doc.get("title")
        title = found if isinstance(found, str) else ""
        for key in ("contents", "text", "body", "raw"):
            if isinstance(doc.get(key), str):
                text = doc[key]
                break
        if isinstance(doc.get("url"), str) and urllib.parse.urlsplit(doc["url"]).scheme in ("http", "https"):
            url = doc["url"]
    result["title"] = _cut(title, TITLE_CHARS)
    result["snippet"] = _cut(text, SNIPPET_CHARS)
    if url is not None:
        result["url"] = url
    return result
