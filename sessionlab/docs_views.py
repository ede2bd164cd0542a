"""The project's documentation (docs/*.md), served at /docs/<name>/ so that a form's help can link to the
section that explains an option. Public, like the repository they come from: they hold no data.

No Markdown library is installed, so the page is the text itself: headings become headings with the anchor
a reader would expect (GitHub's: lower case, punctuation dropped, spaces to hyphens), everything between
them is shown as written. Only the files of docs/ are served, by name (no path is taken from the URL)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.http import Http404
from django.shortcuts import render
from django.utils.html import escape
from django.utils.safestring import mark_safe

DOCS = Path(settings.BASE_DIR) / "docs"
_NAME = re.compile(r"[a-z0-9-]{1,60}")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_LINK = re.compile(r"\]\(([a-z0-9-]+)\.md(#[a-z0-9-]*)?\)")


def anchor(text: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def doc_names() -> list[str]:
    return sorted(path.stem for path in DOCS.glob("*.md"))


@lru_cache(maxsize=64)
def _rendered(name: str, mtime: float) -> tuple[str, str]:
    text = (DOCS / f"{name}.md").read_text(encoding="utf-8")
    parts: list[str] = []
    block: list[str] = []
    title = name
    seen: dict[str, int] = {}

    def flush():
        if any(line.strip() for line in block):
            body = escape("\n".join(block).strip("\n"))
            # Links to another document: to its served page (the text keeps the Markdown around them).
            body = _LINK.sub(lambda m: f"]({m.group(1)}/{m.group(2) or ''})", body)
            parts.append(f'<pre class="doc-text">{body}</pre>')
        block.clear()

    fence = False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        heading = None if fence else _HEADING.match(line)
        if heading is None:
            block.append(line)
            continue
        flush()
        level, words = len(heading.group(1)), heading.group(2)
        slug = anchor(words)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        slug = slug if not count else f"{slug}-{count}"
        if level == 1 and title == name:
            title = words
        parts.append(f'<h{min(level, 4)} id="{escape(slug)}">{escape(words)}</h{min(level, 4)}>')
    flush()
    return title, "\n".join(parts)


def doc_page(request, name):
    if not _NAME.fullmatch(name) or name not in doc_names():
        raise Http404("No such document.")
    path = DOCS / f"{name}.md"
    title, body = _rendered(name, path.stat().st_mtime)
    return render(request, "docs/page.html", {"title": title, "body": mark_safe(body), "names": doc_names()})  # noqa: S308 (escaped above)


def doc_index(request):
    return render(request, "docs/index.html", {"names": doc_names()})
