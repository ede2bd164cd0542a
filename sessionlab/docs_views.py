"""The project's documentation (docs/*.md), served at /docs/<name>/ so that a form's help can link to the
section that explains an option. Public, like the repository they come from: they hold no data.

Rendered by markdown-it-py (CommonMark and its tables). Raw HTML in the Markdown is escaped, never passed
through (the page's CSP allows no inline script or style, and a document is not trusted to be HTML). Headings
get the anchor a reader would expect (GitHub's: lower case, punctuation dropped, spaces to hyphens). Links to
another document go to its served page (`security.md#x` -> `/docs/security/#x`); links to other repository
files (docs/deploy/compose.yaml, ../README.md) have no page here, so only their text is shown. Images of
docs/img/ are served by name (`doc_image`). Only files of docs/ are served, by a name checked against a
pattern and the directory's listing: no path is taken from the URL."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.http import FileResponse, Http404
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import mark_safe
from markdown_it import MarkdownIt

DOCS = Path(settings.BASE_DIR) / "docs"
IMAGES = DOCS / "img"
_NAME = re.compile(r"[a-z0-9-]{1,60}")
_IMAGE = re.compile(r"[a-z0-9-]{1,80}\.png")
_DOC_LINK = re.compile(r"([a-z0-9-]+)\.md(#[a-z0-9-]*)?")
_TITLE = re.compile(r"^# +(.+?)\s*$", re.M)


def anchor(text: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def doc_names() -> list[str]:
    return sorted(path.stem for path in DOCS.glob("*.md"))


def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def _link(href: str, names: set[str]) -> str | None:
    """The served address of a link in a document, or None where it has no page here (a repository file)."""
    if href.startswith(("http://", "https://", "mailto:", "#")):
        return href
    found = _DOC_LINK.fullmatch(href)
    if found and found.group(1) in names:
        return reverse("doc_page", args=[found.group(1)]) + (found.group(2) or "")
    return None


def _image(src: str) -> str | None:
    name = src.removeprefix("img/")
    if src.startswith("img/") and _IMAGE.fullmatch(name):
        return reverse("doc_image", args=[name])
    return None


def _rewrite(tokens, names: set[str]) -> None:
    """Heading anchors (GitHub's, numbered when repeated), links and image addresses, in place."""
    seen: dict[str, int] = {}
    for position, token in enumerate(tokens):
        if token.type == "heading_open":
            slug = anchor(tokens[position + 1].content)
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            token.attrSet("id", slug if not count else f"{slug}-{count}")
        if token.type != "inline" or not token.children:
            continue
        kept = []
        dropped = 0  # link_open tokens whose link_close goes too (links do not nest)
        for child in token.children:
            if child.type == "link_open":
                href = _link(str(child.attrGet("href") or ""), names)
                if href is None:
                    dropped += 1
                    continue
                child.attrSet("href", href)
            elif child.type == "link_close" and dropped:
                dropped -= 1
                continue
            elif child.type == "image":
                src = _image(str(child.attrGet("src") or ""))
                if src is None:  # an image with no file here: its description, as text
                    child.type, child.tag = "text", ""
                    child.content = child.content or "".join(c.content for c in child.children or [])
                else:
                    child.attrSet("src", src)
                    child.attrSet("loading", "lazy")
            kept.append(child)
        token.children = kept


@lru_cache(maxsize=64)
def _rendered(name: str, mtime: float) -> tuple[str, str]:
    text = (DOCS / f"{name}.md").read_text(encoding="utf-8")
    markdown = _markdown()
    tokens = markdown.parse(text)
    _rewrite(tokens, set(doc_names()))
    return doc_title(name, text), markdown.renderer.render(tokens, markdown.options, {})


def doc_title(name: str, text: str) -> str:
    """A document's title: its first `# ` heading, else its name."""
    found = _TITLE.search(re.sub(r"^```.*?^```", "", text, flags=re.M | re.S))
    return found.group(1) if found else name


def doc_page(request, name):
    if not _NAME.fullmatch(name) or name not in doc_names():
        raise Http404("No such document.")
    path = DOCS / f"{name}.md"
    title, body = _rendered(name, path.stat().st_mtime)
    return render(request, "docs/page.html", {"title": title, "body": mark_safe(body)})  # noqa: S308 (markdown-it escapes, html off)


def doc_index(request):
    documents = [
        (name, doc_title(name, (DOCS / f"{name}.md").read_text(encoding="utf-8"))) for name in doc_names()
    ]
    return render(request, "docs/index.html", {"documents": documents})


def doc_image(request, name):
    """An image of docs/img/, by a name checked against the pattern and the directory's own listing."""
    if not _IMAGE.fullmatch(name) or name not in {path.name for path in IMAGES.glob("*.png")}:
        raise Http404("No such image.")
    return FileResponse((IMAGES / name).open("rb"), content_type="image/png")
